"""A feed relayed to a reader that never waits (feeds.py has the vocabulary).

``FeedRelay`` opens the feed (``TableService.subscribe`` or ``watch``) in a
task of its own, since the table's lock or store may make it wait; from then on the
table's pushes call it directly (``Feed``'s ``notify``): each view goes to
``on_view`` as the table makes it, with no task in between, and the end to ``on_end``,
once (None: a clean end, the table over or a newer feed of the seat; else the
error). ``stop()`` lets it go at any point, with no ``on_end``. The replica's side of a
gateway's link runs one per feed, and so does ``rackem up``'s in-process seam.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from services._gen.rackem.v1 import game_pb2
from services.common.errors import ServiceError
from services.common.unexpected import refusal_for
from services.table.feeds import Feed

__all__ = ["FeedRelay", "Opener"]

log = logging.getLogger("rackem.table")


class _Table(Protocol):
    def unsubscribe(self, sub: Feed) -> None: ...


Opener = Callable[[Callable[[], None]], Awaitable[tuple[_Table, Feed]]]
"""Opens a feed given its ``notify``: ``partial(service.subscribe, request)``."""


def _ignore_view(view: game_pb2.TableView) -> None:
    pass


def _ignore_end(error: ServiceError | None) -> None:
    pass


class FeedRelay:
    __slots__ = ("_on_end", "_on_view", "_open", "sub", "table", "task")

    def __init__(
        self,
        opener: Opener,
        on_view: Callable[[game_pb2.TableView], None],
        on_end: Callable[[ServiceError | None], None],
    ) -> None:
        self._on_view = on_view
        self._on_end = on_end
        self._open = True
        self.table: _Table | None = None
        self.sub: Feed | None = None
        self.task: asyncio.Task[None] | None = asyncio.create_task(self._start(opener))

    async def _start(self, opener: Opener) -> None:
        try:
            table, sub = await opener(self._flow)
        except ServiceError as err:
            self._end(err)
            return
        except Exception as exc:
            self._end(refusal_for(log, "Link", exc))
            return
        self.task = None
        if not self._open:  # stopped meanwhile
            table.unsubscribe(sub)
            return
        self.table, self.sub = table, sub
        self._flow()

    def _flow(self) -> None:
        """Hand on the views queued now; at the feed's end, end it here."""
        sub = self.sub
        if sub is None or not self._open:
            return  # still being set up (it flows once it is), or stopped
        on_view = self._on_view
        for view in sub.take():
            on_view(view)
        if not sub.ended:
            return
        table = self.table
        self._end(sub.error)
        if table is not None:  # after the table's own loop over its feeds
            asyncio.get_running_loop().call_soon(table.unsubscribe, sub)

    def _end(self, error: ServiceError | None) -> None:
        if not self._open:
            return
        on_end = self._on_end
        self._let_go()
        on_end(error)

    def stop(self) -> None:
        """Let the feed go (the reader is gone): no more views, no ``on_end``."""
        if not self._open:
            return
        if self.task is not None:
            self.task.cancel()
        if self.table is not None and self.sub is not None:
            self.table.unsubscribe(self.sub)
        self._let_go()

    def _let_go(self) -> None:
        """Drop the table, the feed and the reader's callbacks. The feed's
        ``notify`` refers back to this object, a cycle only a full collection would free,
        and the services' GC policy runs one every ten minutes: without this, each finished
        table (its match, its log) would stay in memory that long, and so would the reader."""
        self._open = False
        self.table = self.sub = None
        self._on_view, self._on_end = _ignore_view, _ignore_end
