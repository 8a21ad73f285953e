"""Fan-out of table changes to the lobby watchers of this replica.

One consumer per replica reads the store's change feed (Redis pub/sub: one connection,
however many watchers) and wakes the watchers of each changed table. A watcher registers
before it reads the table, so a change between its read and its wait is never missed;
the feed itself is at-most-once, so watchers also re-read every ``watch_poll_ms``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager

__all__ = ["LobbyWatchers"]


class LobbyWatchers:
    """The waiters of this replica's lobby streams by table id, woken by ``run`` from the feed."""

    def __init__(self) -> None:
        self._waiters: dict[str, set[asyncio.Event]] = {}
        self.closed = False

    @contextmanager
    def waiter(self, table_id: str) -> Iterator[asyncio.Event]:
        """An event set on the next change of ``table_id`` (or when the watchers close)."""
        flag = asyncio.Event()
        if self.closed:
            flag.set()
        self._waiters.setdefault(table_id, set()).add(flag)
        try:
            yield flag
        finally:
            flags = self._waiters.get(table_id)
            if flags is not None:
                flags.discard(flag)
                if not flags:
                    del self._waiters[table_id]

    def notify(self, table_id: str) -> None:
        """Wake the watchers of ``table_id``; ``""`` wakes every watcher."""
        groups = self._waiters.values() if table_id == "" else [self._waiters.get(table_id, ())]
        for flags in groups:
            for flag in flags:
                flag.set()

    async def run(self, changes: AsyncIterator[str]) -> None:
        async for table_id in changes:
            self.notify(table_id)

    def close(self) -> None:
        """Wake every watcher for good: streams end so the server can stop at once."""
        self.closed = True
        self.notify("")
