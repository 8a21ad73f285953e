"""The replay viewer's addresses: ``/replay/{table_id}`` and ``/replay/`` serve ``replay.html``.

The page is static and the same for every id (its files under the page's version, as
``StaticSite`` sends ``index.html``): it fetches ``/match/{table_id}.json`` itself
(404 while the match runs, so nothing of a running match is revealed here) and
re-derives the match in the browser. An id that cannot be a table id gets the same
page with status 404, where the page says that no finished match has that id.
"""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from services.gateway.static_files import StaticSite

__all__ = ["replay_routes"]

PAGE = "replay.html"
_TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def replay_routes(site: StaticSite) -> list[Route]:
    """The routes of the replay viewer, serving the site's ``replay.html``."""

    async def replay(request: Request) -> Response:
        table_id = request.path_params.get("table_id")
        status = 200 if table_id is None or _TABLE_ID.fullmatch(table_id) else 404
        return await site.page(request, PAGE, status)

    return [
        Route("/replay", replay, methods=["GET", "HEAD"]),
        Route("/replay/", replay, methods=["GET", "HEAD"]),
        Route("/replay/{table_id}", replay, methods=["GET", "HEAD"]),
    ]
