"""A feed's views read one at a time, for tests: ``reading`` opens the feed (a link's
``subscribe`` or ``watch``) with an ``on_view`` that queues each view, as no production
reader does (the gateway hands each view on in ``on_view``: services/gateway/follow.py).

    views = reading(link.subscribe, request)  # link.subscribe(request, on_view)
    view = await anext(views)  # the next view; StopAsyncIteration at a clean end
    view = await anext(views, None)  # or None at a clean end
    async for view in views: ...  # every view to the end
    views.close()  # the feed's ``close``

After the views that came before it, the end raises what the feed ended with
(``LinkFeed.finished``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from services._gen.rackem.v1 import game_pb2
from services.gateway.table_client import LinkFeed

__all__ = ["Reading", "reading"]


def reading(open: Callable[..., LinkFeed], *args: Any) -> Reading:
    """The views of the feed that ``open(*args, on_view)`` opens."""
    return Reading(lambda on_view: open(*args, on_view))


class Reading:
    """One feed's views, queued as they come (the module says how to read them)."""

    def __init__(self, open: Callable[[Callable[[game_pb2.TableView], None]], LinkFeed]) -> None:
        self._views: list[game_pb2.TableView] = []
        self._more = asyncio.Event()
        self._ending: asyncio.Task[None] | None = None  # awaits the feed's end once read to it
        self._over = False
        self._error: BaseException | None = None
        self.feed = open(self._put)

    def _put(self, view: game_pb2.TableView) -> None:
        self._views.append(view)
        self._more.set()

    def __aiter__(self) -> Reading:
        return self

    async def __anext__(self) -> game_pb2.TableView:
        while not self._views:
            if self._over:
                if self._error is not None:
                    raise self._error
                raise StopAsyncIteration
            if self._ending is None:
                self._ending = asyncio.create_task(self._until_end())
            self._more.clear()
            await self._more.wait()
        return self._views.pop(0)

    async def _until_end(self) -> None:
        try:
            await self.feed.finished()
        except Exception as exc:
            self._error = exc
        self._over = True
        self._more.set()

    def close(self) -> None:
        """Close the feed: what is queued can still be read, then the end."""
        self.feed.close()
        self._over = True
        self._more.set()
        if self._ending is not None:
            self._ending.cancel()
