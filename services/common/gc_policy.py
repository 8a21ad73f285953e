"""When the cyclic garbage collector may stop a service: rarely, and on a schedule.

CPython's full collection walks every tracked object with the process stopped. A
gateway holds ~190 of them per connection and a table replica a few hundred per
table, so at 2,000 players a full collection stopped ``rackem up`` for 300-800 ms,
about once a minute (docs/performance.md): every move in flight waited for it, and it
alone set the p99. Young collections are cheap and catch most garbage.

The policy: whatever survives a generation-1 collection (so has already outlived two
collections) is frozen at once, out of the collector's reach, so generation 2 stays
nearly empty and its collections cost nothing. Generation 1 is collected after every
second young collection instead of every tenth, so it never grows large either
(measured at 2,000 players: its pauses went from up to 100 ms to mostly under 25).
Cyclic garbage among frozen objects is not lost, only deferred: every ``full_every_s``
seconds everything is unfrozen and collected in one full collection (the one long
pause, now once per period instead of once a minute), and the survivors are frozen
again.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from typing import Any

__all__ = ["FULL_EVERY_S", "THRESHOLDS", "GcPolicy"]

FULL_EVERY_S = 600.0
THRESHOLDS = (700, 2, 10)  # CPython's defaults but the second: (700, 10, 10)


class GcPolicy:
    """Freeze what outlives generation 1; collect everything every ``full_every_s``."""

    def __init__(self, full_every_s: float = FULL_EVERY_S) -> None:
        if full_every_s <= 0:
            raise ValueError("the full collection period must be positive")
        self._every = full_every_s
        self._task: asyncio.Task[None] | None = None
        self._thresholds: tuple[int, int, int] | None = None
        self.full_collections = 0

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "stop" and info["generation"] == 1:
            gc.freeze()  # generations 0 and 1 are empty now: this moves only survivors

    def start(self) -> None:
        """Freeze what is alive now and follow the policy from here (in a running loop)."""
        if self._thresholds is None:
            self._thresholds = gc.get_threshold()
            gc.set_threshold(*THRESHOLDS)
        gc.collect()
        gc.freeze()
        if self._on_gc not in gc.callbacks:
            gc.callbacks.append(self._on_gc)
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._full_collections())

    def collect_all(self) -> int:
        """Unfreeze, collect everything, freeze the survivors: the objects collected."""
        gc.unfreeze()
        found = gc.collect()
        gc.freeze()
        self.full_collections += 1
        return found

    async def _full_collections(self) -> None:
        while True:
            await asyncio.sleep(self._every)
            self.collect_all()

    async def stop(self) -> None:
        """Back to CPython's own policy, everything unfrozen."""
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)
        if self._thresholds is not None:
            gc.set_threshold(*self._thresholds)
            self._thresholds = None
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        gc.unfreeze()
