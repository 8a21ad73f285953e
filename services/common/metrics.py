"""What every service measures the same way, in a registry of the service's own.

One registry per service instance, never prometheus_client's global one: ``rackem up``
runs the four services in one process, and each keeps its own metrics. Each registry
holds the process's figures (prometheus_client's ``ProcessCollector``: CPU time,
resident memory, open files, start time) and ``rackem_event_loop_lag_seconds``: how late
a short sleep of the service's event loop wakes, sampled every ``TICK_S``
(``sample_loop_lag``; the gateway's admission control takes the same samples,
services/gateway/admission.py). The names: docs/metrics.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from prometheus_client import CollectorRegistry, Histogram, ProcessCollector

__all__ = ["LAG_BUCKETS", "TICK_S", "ServiceMetrics", "sample_loop_lag"]

TICK_S = 0.1  # the sampler's sleep between two lag samples
LAG_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class ServiceMetrics:
    """A service's registry, with the process's figures and the event loop's lag in it;
    each service's metrics class adds its own."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        ProcessCollector(registry=self.registry)
        self.loop_lag_seconds = Histogram(
            "rackem_event_loop_lag_seconds",
            f"How late the event loop wakes from a {TICK_S * 1000:.0f} ms sleep",
            buckets=LAG_BUCKETS,
            registry=self.registry,
        )


async def sample_loop_lag(observe: Callable[[float], None], tick_s: float = TICK_S) -> None:
    """Sleep ``tick_s`` at a time and ``observe`` how late each wake-up is, until cancelled."""
    loop = asyncio.get_running_loop()
    while True:
        asked = loop.time()
        await asyncio.sleep(tick_s)
        observe(max(loop.time() - asked - tick_s, 0.0))
