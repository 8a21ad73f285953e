"""The table replica's Prometheus metrics, in a registry of their own (docs/metrics.md).

/metrics is served on ``METRICS_PORT`` (services/common/metrics_http.py).
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from services.common.metrics import ServiceMetrics

__all__ = ["OUTCOMES", "RENEWALS", "TableMetrics"]

WRITE_RESULTS = ("stored", "present", "failed")
OUTCOMES = ("finished", "abandoned", "failed")
"""How a match ended: played to its end; ended because its humans left or were gone too
long (``abandoned``); lost by the service (its driver failed)."""
RENEWALS = ("ok", "lost", "error")
TAKEOVER_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class TableMetrics(ServiceMetrics):
    def __init__(self) -> None:
        super().__init__()
        registry = self.registry
        self.archive_pending = Gauge(
            "rackem_archive_pending",
            "Finished tables whose record waits for the archive (the whole fleet's, as this "
            "replica last counted them)",
            registry=registry,
        )
        self.archive_writes = Counter(
            "rackem_archive_writes",
            "Records written to the archive by this replica: stored now, present already "
            "(another write came first), failed (the archive did not answer)",
            ["result"],
            registry=registry,
        )
        for result in WRITE_RESULTS:
            self.archive_writes.labels(result)
        self.archive_up = Gauge(
            "rackem_archive_up",
            "1 while the archive answers this replica, 0 while it does not",
            registry=registry,
        )
        self.live_tables = Gauge(
            "rackem_table_live_tables", "Tables this replica serves", registry=registry
        )
        self.matches_started = Counter(
            "rackem_table_matches_started", "Matches created on this replica", registry=registry
        )
        ended = Counter(
            "rackem_table_matches_ended",
            "Matches that ended here, by outcome: finished, abandoned, failed",
            ["outcome"],
            registry=registry,
        )
        self.matches_ended = {outcome: ended.labels(outcome) for outcome in OUTCOMES}
        renewals = Counter(
            "rackem_table_lease_renewals",
            "Idle tables' lease renewals, by result: ok, lost (another replica holds it), "
            "error (Redis did not answer)",
            ["result"],
            registry=registry,
        )
        self.lease_renewals = {result: renewals.labels(result) for result in RENEWALS}
        self.adoptions = Counter(
            "rackem_table_adoptions",
            "Tables this replica took over from another (asked for, or found by its sweep)",
            registry=registry,
        )
        self.takeover_seconds = Histogram(
            "rackem_table_takeover_seconds",
            "For a table taken over: from its last owner's lease expiry, as the lease index "
            "last noted it, to this replica serving it",
            buckets=TAKEOVER_BUCKETS,
            registry=registry,
        )
        self.fenced_writes = Counter(
            "rackem_table_fenced_writes",
            "Writes to a table refused because another replica holds its lease",
            registry=registry,
        )
