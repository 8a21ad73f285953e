"""/metrics on a port of its own, for the gRPC services (the gateway serves it from uvicorn,
services/gateway/ports.py).

``METRICS_PORT`` unset: not served; 0: any free port; never the service's gRPC port.
prometheus_client's own small HTTP server answers on a thread of its own (it only reads
the metrics: the event loop is never held by a scrape). While /metrics is served the
service also samples its event loop's lag (services/common/metrics.py); without it
nobody would read the samples.
"""

from __future__ import annotations

import asyncio
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, start_http_server

from services.common.cancelling import cancel_until_done
from services.common.metrics import ServiceMetrics, sample_loop_lag
from services.common.running import Shutdown

__all__ = ["check_port", "serve_metrics", "start_metrics"]


def check_port(metrics_port: int | None, port: int) -> None:
    """Refuse a ``METRICS_PORT`` equal to the service's own (fixed) port."""
    if metrics_port is not None and metrics_port == port != 0:
        raise ValueError("METRICS_PORT must differ from PORT: /metrics is never public")


def serve_metrics(registry: CollectorRegistry, host: str, port: int) -> tuple[WSGIServer, int]:
    """/metrics of ``registry`` on ``host:port`` (0: a free one): the server, and the port
    it bound. ``server.shutdown()`` then ``server.server_close()`` stops it."""
    server, _thread = start_http_server(port, host, registry=registry)
    return server, int(server.server_port)


async def start_metrics(
    shutdown: Shutdown, metrics: ServiceMetrics, host: str, port: int | None
) -> int:
    """Serve ``metrics`` on ``host:port`` and sample the loop's lag, both undone by
    ``shutdown``; the port bound, or 0 when ``port`` is None (not served)."""
    if port is None:
        return 0
    http, bound = serve_metrics(metrics.registry, host, port)

    async def stop_http() -> None:
        http.shutdown()
        http.server_close()

    shutdown.push_close(stop_http)
    sampler = asyncio.create_task(sample_loop_lag(metrics.loop_lag_seconds.observe))
    shutdown.push_close(lambda: cancel_until_done(sampler))
    return bound
