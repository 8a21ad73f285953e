"""How long the cyclic garbage collector stops the gateway's loop, into a histogram.

Every collection stops the whole process: a full one walks every tracked object, and a
gateway holds about 190 for each connection (docs/performance.md), so at a few
thousand players a full collection is a pause of hundreds of milliseconds that every
move in flight waits for. ``rackem_gateway_gc_pause_seconds`` shows them by generation.
"""

from __future__ import annotations

import gc
import time
from typing import Any

from prometheus_client import Histogram

__all__ = ["GcPauses"]


class GcPauses:
    """Times each collection while started (``gc.callbacks``); ``stop`` unhooks it."""

    def __init__(self, histogram: Histogram) -> None:
        self._histogram = histogram
        self._started: float | None = None

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        elif self._started is not None:
            took = time.perf_counter() - self._started
            self._started = None
            self._histogram.labels(str(info["generation"])).observe(took)

    def start(self) -> None:
        if self._on_gc not in gc.callbacks:
            gc.callbacks.append(self._on_gc)

    def stop(self) -> None:
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)
