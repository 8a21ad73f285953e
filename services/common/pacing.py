"""How often a busy link writes: at most one message every ``interval``, with all that queued.

A message on a gRPC stream costs both ends a fixed share of CPU whatever it carries
(grpc.aio's completion queue and poller thread, a socket write and the wake-ups behind
it; docs/performance.md has the figure). A link writes as soon as
something is queued. When it is busy and its last message left less than ``interval``
ago, it waits out the rest, so what queues meanwhile goes in the same message: it
sends at most one message per ``interval`` however many moves and views it carries
(Nagle's algorithm, in time), and nothing waits longer than ``interval``.

Busy means that lately (this ``window`` or the one before) the link carried at least
four events (calls, answers, views) per ``interval`` on average, of ``tables`` tables
or more. Below that rate a held message carries little more than it would have alone,
and its timer costs the loop a wake-up: pacing links at one to three events an interval
(two gateways and three replicas at 4,000 humans) saved nothing measurable. And waiting
pays only across tables: one table's moves come one after another, each after the
answer to the one before, so holding them back batches nothing and only delays that
table (one fast client against bots, the bots' moves back to back). ``interval`` 0
turns it off.
"""

from __future__ import annotations

import asyncio

__all__ = ["BUSY_EVENTS", "TABLES", "WINDOW_S", "Pacer"]

WINDOW_S = 0.1
TABLES = 4
BUSY_EVENTS = 4  # per interval, on average


class Pacer:
    def __init__(self, interval_s: float, tables: int = TABLES, window_s: float = WINDOW_S) -> None:
        self._interval = interval_s
        self._tables = tables
        self._window = window_s
        self._last = -interval_s  # (loop time) when the last message left
        self._seen: set[str] = set()  # tables with traffic this window ...
        self._events = 0  # ... and its events
        self._before = (0, 0)  # the window before's tables and events
        self._window_ends = 0.0
        self._rate = BUSY_EVENTS * window_s / interval_s if interval_s > 0 else 0.0
        self._loop: asyncio.AbstractEventLoop | None = None

    def _now(self) -> float:
        """The loop's time; the window moves on when it is over."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        now = self._loop.time()
        if now >= self._window_ends:
            just_ended = now < self._window_ends + self._window
            self._before = (len(self._seen), self._events) if just_ended else (0, 0)
            self._seen = set()
            self._events = 0
            self._window_ends = now + self._window
        return now

    def saw(self, table_id: str) -> None:
        """``table_id`` has traffic on the link (a call, an answer, a view)."""
        if self._interval > 0:
            self._now()
            self._seen.add(table_id)
            self._events += 1

    @property
    def busy(self) -> bool:
        now = (len(self._seen), self._events)
        return any(
            tables >= self._tables and events >= self._rate
            for tables, events in (now, self._before)
        )

    async def ready(self) -> None:
        """Return once a message may leave: at once unless the link is busy and the last
        message left less than ``interval`` ago."""
        if self._interval <= 0:
            return
        now = self._now()
        wait = self._last + self._interval - now
        if wait > 0 and self.busy:
            await asyncio.sleep(wait)
            now = self._now()
        self._last = now
