"""When the cyclic garbage collector may stop a service: briefly, and on a schedule.

CPython's full collection walks every tracked object with the process stopped. A
gateway holds ~190 of them per connection and a table replica a few hundred per
table, so at 2,000 players a full collection stopped ``rackem up`` for 300-800 ms,
about once a minute (docs/performance.md): every move in flight waited for it, and it
alone set the p99.

The policy:

- **Young collections on a clock.** Every ``young_every_s`` (0.1 s) generations 0
  and 1 are collected, so a collection only ever walks what was made in the last
  tenth of a second and is still alive. CPython's own trigger counts allocations
  *minus* deallocations, and every old object freed counts down: under load, with
  players' waits (futures, coroutines) living for seconds, the young generation grew
  to ~14,000 objects between its collections, and each one stopped the process for
  up to 18 ms (generation 0) and 75 ms (generation 1) at 2,000 players. CPython's
  trigger stays as a backstop, at ``THRESHOLDS``, should the loop ever stall.
- **Survivors are frozen.** Whatever outlives a generation-1 collection is frozen at
  once, out of the collector's reach, so generation 2 stays nearly empty and its
  collections cost nothing.
- **Nothing is lost.** Cyclic garbage among frozen objects is only deferred: every
  ``full_every_s`` seconds everything is unfrozen and collected in one full collection
  (the one long pause, once per period), and the survivors are frozen again.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from typing import Any

__all__ = ["FULL_EVERY_S", "THRESHOLDS", "YOUNG_EVERY_S", "GcPolicy"]

FULL_EVERY_S = 600.0
YOUNG_EVERY_S = 0.1
THRESHOLDS = (20_000, 2, 10)  # the backstop; CPython's defaults are (700, 10, 10)


class GcPolicy:
    """Young collections every ``young_every_s``, their survivors frozen; everything
    collected every ``full_every_s``."""

    def __init__(
        self, full_every_s: float = FULL_EVERY_S, young_every_s: float = YOUNG_EVERY_S
    ) -> None:
        if full_every_s <= 0 or young_every_s <= 0:
            raise ValueError("the collection periods must be positive")
        self._every = full_every_s
        self._young_every = young_every_s
        self._task: asyncio.Task[None] | None = None
        self._thresholds: tuple[int, int, int] | None = None
        self.full_collections = 0
        self.young_collections = 0

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
            self._task = asyncio.get_running_loop().create_task(self._collections())

    def collect_all(self) -> int:
        """Unfreeze, collect everything, freeze the survivors: the objects collected."""
        gc.unfreeze()
        found = gc.collect()
        gc.freeze()
        self.full_collections += 1
        return found

    async def _collections(self) -> None:
        loop = asyncio.get_running_loop()
        next_full = loop.time() + self._every
        while True:
            await asyncio.sleep(self._young_every)
            if loop.time() >= next_full:
                self.collect_all()
                next_full = loop.time() + self._every
            else:
                gc.collect(1)  # the hook freezes the survivors
                self.young_collections += 1

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
