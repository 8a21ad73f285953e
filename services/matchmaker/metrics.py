"""The matchmaker's Prometheus metrics, in a registry of their own (docs/metrics.md)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from services.common.metrics import ServiceMetrics

__all__ = ["KINDS", "MatchmakerMetrics"]

KINDS = ("quick", "private")
"""A table's kind: a quick match's (public), or a private table's (a code, a rematch)."""
WAIT_BUCKETS = (0.5, 1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 45.0, 60.0, 120.0, 300.0)


class MatchmakerMetrics(ServiceMetrics):
    def __init__(self) -> None:
        super().__init__()
        registry = self.registry
        self.waiting_players = Gauge(
            "rackem_matchmaker_waiting_players",
            "Players whose waiting room this replica streams (WatchLobby) until their table "
            "starts: summed over replicas, the players waiting",
            registry=registry,
        )
        self.wait_seconds = Histogram(
            "rackem_matchmaker_wait_seconds",
            "Quick match: from the first player's entry into the queue to the table's start",
            buckets=WAIT_BUCKETS,
            registry=registry,
        )
        started = Counter(
            "rackem_matchmaker_tables_started",
            "Tables this replica started at a table replica, by kind: quick, private",
            ["kind"],
            registry=registry,
        )
        self.tables_started = {kind: started.labels(kind) for kind in KINDS}
