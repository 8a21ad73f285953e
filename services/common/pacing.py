"""How often a link writes: at most one message every ``interval``, with all that queued.

A message on a gRPC stream costs both ends a fixed share of CPU whatever it carries
(grpc.aio's completion queue and poller thread, a socket write and the wake-ups behind
it: ~70 µs a side on the machines of docs/performance.md). A link writes as soon as
something is queued; when its last message left less than ``interval`` ago, it waits
out the rest, so what queues meanwhile goes in the same message. At low rates nothing
waits (each message leaves at once); at high rates a link sends at most one message per
``interval`` however many moves and views it carries (Nagle's algorithm, in time), and
nothing waits longer than ``interval``. 0 turns it off.
"""

from __future__ import annotations

import asyncio

__all__ = ["Pacer"]


class Pacer:
    def __init__(self, interval_s: float) -> None:
        self._interval = interval_s
        self._last = -interval_s  # (loop time) when the last message left

    async def ready(self) -> None:
        """Return once a message may leave: at once if the last one left ``interval`` ago."""
        if self._interval <= 0:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        wait = self._last + self._interval - now
        if wait > 0:
            await asyncio.sleep(wait)
            now = loop.time()
        self._last = now
