"""The reviews the gateway has answered (``/review/{table_id}.json?seat=N``), kept in memory.

A finished match's review does not change, and one takes the bot service up to a couple
of seconds of CPU: the match-over screen asks for one per human, a reload asks again. So
the gateway keeps the last ``size`` reviews it got (least recently asked for dropped
first), and asks the bot service once for a review several requests want at the same time
(each waits for that one answer; one that goes away does not cancel it for the others).
A refusal is never kept: the next request asks again.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable

__all__ = ["Reviews"]

Key = tuple[str, int]  # (table id, seat)


class Reviews:
    def __init__(self, size: int) -> None:
        self._size = size
        self._kept: OrderedDict[Key, str] = OrderedDict()
        self._asking: dict[Key, asyncio.Future[str]] = {}

    def kept(self, key: Key) -> str | None:
        """The review kept for ``key``, if any (now the most recently asked for)."""
        review = self._kept.get(key)
        if review is not None:
            self._kept.move_to_end(key)
        return review

    async def get(self, key: Key, ask: Callable[[], Awaitable[str]]) -> str:
        """The review for ``key``: kept, being asked for, or asked for now with ``ask()``."""
        review = self.kept(key)
        if review is not None:
            return review
        asking = self._asking.get(key)
        if asking is None:
            asking = self._asking[key] = asyncio.ensure_future(ask())
            asking.add_done_callback(lambda done: self._answered(key, done))
        return await asyncio.shield(asking)

    def _answered(self, key: Key, done: asyncio.Future[str]) -> None:
        del self._asking[key]
        if done.cancelled() or done.exception() is not None:
            return  # (the exception read here: the waiters, if any are left, get it too)
        if self._size <= 0:
            return
        self._kept[key] = done.result()
        while len(self._kept) > self._size:
            self._kept.popitem(last=False)
