"""Which listening port a request came in on: the public one (protocol, web client, health)
or the metrics port (``/metrics`` only, for Prometheus; never behind the Ingress)."""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from services.gateway.metrics import Metrics

__all__ = ["ByPort", "metrics_app"]


def metrics_app(metrics: Metrics) -> Starlette:
    """``/metrics``: the Prometheus text of ``metrics``; nothing else."""

    async def render(request: Request) -> Response:
        return Response(metrics.render(), media_type=CONTENT_TYPE_LATEST)

    return Starlette(routes=[Route("/metrics", render)])


class ByPort:
    """Requests to local port ``metrics_port`` go to ``metrics``; all else (lifespan too)
    to ``public``."""

    def __init__(self, public: ASGIApp, metrics: ASGIApp, metrics_port: int) -> None:
        self.public = public
        self.metrics = metrics
        self.metrics_port = metrics_port

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        server = scope.get("server") if scope["type"] != "lifespan" else None
        if server is not None and server[1] == self.metrics_port:
            await self.metrics(scope, receive, send)
        else:
            await self.public(scope, receive, send)
