"""The table replica's Prometheus metrics, in a registry of their own, and /metrics.

/metrics is served on ``METRICS_PORT`` (unset: not served; 0: a free port), never on the
gRPC port, by prometheus_client's own small HTTP server on a thread of its own (it only
reads the metrics: the event loop is never held by a scrape).
"""

from __future__ import annotations

from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server

__all__ = ["TableMetrics", "serve_metrics"]

WRITE_RESULTS = ("stored", "present", "failed")


class TableMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.archive_pending = Gauge(
            "rackem_archive_pending",
            "Finished tables whose record waits for the archive (the whole fleet's, as this "
            "replica last counted them)",
            registry=self.registry,
        )
        self.archive_writes = Counter(
            "rackem_archive_writes",
            "Records written to the archive by this replica: stored now, present already "
            "(another write came first), failed (the archive did not answer)",
            ["result"],
            registry=self.registry,
        )
        for result in WRITE_RESULTS:
            self.archive_writes.labels(result)
        self.archive_up = Gauge(
            "rackem_archive_up",
            "1 while the archive answers this replica, 0 while it does not",
            registry=self.registry,
        )


def serve_metrics(metrics: TableMetrics, host: str, port: int) -> tuple[WSGIServer, int]:
    """/metrics on ``host:port`` (0: a free one): the server, and the port it bound.
    ``server.shutdown()`` then ``server.server_close()`` stops it."""
    server, _thread = start_http_server(port, host, registry=metrics.registry)
    return server, int(server.server_port)
