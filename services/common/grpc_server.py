"""What every gRPC service's server starts from: its own port, the standard health service."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterable, Sequence
from typing import Any

import grpc
from grpc_health.v1 import _async as health_aio  # the aio servicer (health.aio)
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.dial import host_port

__all__ = [
    "MAX_CONNECTION_AGE_MS",
    "UNBOUNDED_GRACE_MS",
    "add_health",
    "bind",
    "new_server",
    "set_serving",
    "wait_for_signal",
]


MAX_CONNECTION_AGE_MS = 30_000
"""How long a client's connection lasts before the server asks it to go (HTTP/2 GOAWAY;
gRPC adds ±10 % jitter). The client then dials again for its next call and its resolver
asks the DNS again, so a channel to a headless Service (services/common/channels.py)
reaches the pods added since within about this long."""
UNBOUNDED_GRACE_MS = 2**31 - 1
"""What the calls already open on an aged connection are given: all the time they take
(gRPC's "infinite"). Only new calls move: a gateway's ``Table.Link`` stream and its
waiting-room streams (``WatchLobby``), which live as long as a gateway or a waiting room,
are never cut for the connection's age. ``server.stop(grace)`` still ends them at a
shutdown."""


def new_server(
    interceptors: Sequence[grpc.aio.ServerInterceptor[Any, Any]] = (),
    max_connection_age_ms: int = MAX_CONNECTION_AGE_MS,
) -> grpc.aio.Server:
    """An aio server that owns its port alone, with ``interceptors``, whose connections are
    sent away after ``max_connection_age_ms`` (their open calls left to finish).

    gRPC sets SO_REUSEPORT by default: a second server on a port already in use would then
    start and silently take a share of its connections (a replica on the wrong port, a
    test's server on a port still held)."""
    return grpc.aio.server(
        options=[
            ("grpc.so_reuseport", 0),
            ("grpc.max_connection_age_ms", max_connection_age_ms),
            ("grpc.max_connection_age_grace_ms", UNBOUNDED_GRACE_MS),
            # Clients ping every 2 s to find a path that drops packets (the gateway's
            # channels, services/gateway/backends.py): allowed, never a GOAWAY for them.
            ("grpc.http2.min_ping_interval_without_data_ms", 1000),
            ("grpc.http2.max_ping_strikes", 0),
        ],
        interceptors=list(interceptors) or None,
    )


def add_health(server: grpc.aio.Server, services: Iterable[str]) -> health_aio.HealthServicer:
    """Register the standard health service, SERVING for ``services`` and overall."""
    servicer = health_aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    return servicer


async def set_serving(
    servicer: health_aio.HealthServicer, services: Iterable[str], up: bool
) -> None:
    response = health_pb2.HealthCheckResponse
    status = response.SERVING if up else response.NOT_SERVING
    for name in ("", *services):
        await servicer.set(name, status)


def bind(server: grpc.aio.Server, host: str, port: int) -> int:
    """Bind ``host:port`` (port 0 picks a free one) and return the port bound. ``host`` is
    as ``HOST`` says it: an IPv6 address with or without brackets (``::`` is every
    address), ``""`` every IPv4 address (as a socket's bind takes it)."""
    try:
        bound = server.add_insecure_port(host_port(host or "0.0.0.0", port))
    except RuntimeError as exc:  # gRPC's "Failed to bind": in use, or not an address of ours
        raise OSError(f"cannot bind {host}:{port}") from exc
    if bound == 0:
        raise OSError(f"cannot bind {host}:{port}")
    return bound


async def wait_for_signal() -> None:
    """Return on the first SIGTERM or SIGINT."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
