"""The web client's files, cached by browsers without ever mixing two versions of the page.

The page's version is a hash of every file in the static folder. ``index.html`` is
sent with its stylesheet, script and icons under ``/v/<version>/``; the page's
modules import one another by relative paths, so every module the page loads comes
from the same versioned folder. A versioned file of the current version is
``immutable`` for a year; the page itself, ``sw.js``, the manifest and the same files
at their plain paths are ``no-cache``: the browser keeps them and asks again with
their ``ETag`` (a 304 without a body when nothing changed). A deploy thus shows at
once, and a page never runs the modules of two versions. A version other than the
current one (a page from before a deploy) is served the current files, ``no-cache``.
Compression is the app's ``GZipMiddleware``.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

__all__ = ["IMMUTABLE", "REVALIDATE", "StaticSite"]

LOOK_EVERY_S = 1.0  # how often the folder is looked at again for changed files

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
# What a page (index.html, replay.html) loads by an absolute path, sent under the version.
_ASSET = re.compile(r'((?:href|src)=")/((?:css|js|icons)/)')


class _Files(StaticFiles):
    """Starlette's static files (ETag, Last-Modified, 304s) with a Cache-Control."""

    def __init__(self, site: StaticSite, directory: Path, *, html: bool) -> None:
        super().__init__(directory=directory, html=html, check_dir=False)
        self._site = site

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code in (200, 304):
            version = scope.get("path_params", {}).get("version")
            current = version is not None and version == self._site.version()
            response.headers["Cache-Control"] = IMMUTABLE if current else REVALIDATE
        return response


class StaticSite:
    """The routes that serve the static folder ``directory``: the page at ``/`` and
    ``/index.html``, every file at ``/v/<version>/…`` and at its plain path."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._signature: tuple[tuple[str, int, int], ...] | None = None
        self._version = ""
        self._looked = -LOOK_EVERY_S

    def version(self) -> str:
        """A hash of every file's path and bytes; hashed again only when a file changed."""
        now = time.monotonic()
        if now - self._looked < LOOK_EVERY_S:
            return self._version
        self._looked = now
        signature = tuple(sorted(_stat_all(self.directory)))
        if signature != self._signature:
            digest = hashlib.sha256()
            for rel, _, _ in signature:
                digest.update(rel.encode() + b"\0")
                digest.update((self.directory / rel).read_bytes())
            self._signature, self._version = signature, digest.hexdigest()[:12]
        return self._version

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.index),
            Route("/index.html", self.index),
            Mount("/v/{version}", _Files(self, self.directory, html=False)),
            Mount("/", _Files(self, self.directory, html=True)),
        ]

    async def index(self, request: Request) -> Response:
        return await self.page(request, "index.html")

    async def page(self, request: Request, name: str, status_code: int = 200) -> Response:
        """The HTML page ``name`` of the folder, its files under the current version."""
        try:
            page = (self.directory / name).read_text(encoding="utf-8")
        except FileNotFoundError:
            return Response("Not Found", status_code=404, media_type="text/plain")
        body = _ASSET.sub(rf"\1/v/{self.version()}/\2", page).encode()
        etag = f'"{hashlib.sha256(body).hexdigest()[:20]}"'
        headers = {"ETag": etag, "Cache-Control": REVALIDATE}
        if status_code == 200 and etag in request.headers.get("if-none-match", ""):
            return Response(status_code=304, headers=headers)
        return Response(body, status_code=status_code, media_type="text/html", headers=headers)


def _stat_all(directory: Path) -> list[tuple[str, int, int]]:
    found: list[tuple[str, int, int]] = []
    for root, _, names in os.walk(directory):
        for name in names:
            path = Path(root, name)
            stat = path.stat()
            found.append((path.relative_to(directory).as_posix(), stat.st_size, stat.st_mtime_ns))
    return found
