"""The bot service's Prometheus metrics, in a registry of their own (docs/metrics.md)."""

from __future__ import annotations

from prometheus_client import Histogram

from rackcore.bots import LEVELS
from services.common.metrics import ServiceMetrics

__all__ = ["BotMetrics"]

DECISION_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)


class BotMetrics(ServiceMetrics):
    def __init__(self) -> None:
        super().__init__()
        decision = Histogram(
            "rackem_bot_decision_seconds",
            "Time a bot took to choose a move (its view checked, its choice made), by level",
            ["level"],
            buckets=DECISION_BUCKETS,
            registry=self.registry,
        )
        self.decision_seconds = {level: decision.labels(level) for level in LEVELS}
