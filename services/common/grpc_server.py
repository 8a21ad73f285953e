"""The shape every gRPC service shares: health, graceful stop on SIGTERM."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable, Iterable

import grpc
from grpc_health.v1 import _async as health_aio  # the aio servicer (health.aio)
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.logs import event

__all__ = [
    "add_health",
    "bind",
    "new_server",
    "run_until_signal",
    "set_serving",
    "wait_for_signal",
]

log = logging.getLogger("rackem.grpc")


def new_server() -> grpc.aio.Server:
    """An aio server that owns its port alone. gRPC sets SO_REUSEPORT by default: a second
    server on a port already in use would then start and silently take a share of its
    connections (a replica on the wrong port, a test's server on a port still held)."""
    return grpc.aio.server(options=[("grpc.so_reuseport", 0)])


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
    """Bind ``host:port`` (port 0 picks a free one) and return the port bound."""
    try:
        bound = server.add_insecure_port(f"{host}:{port}")
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


async def run_until_signal(
    server: grpc.aio.Server,
    servicer: health_aio.HealthServicer,
    services: Iterable[str],
    grace: float,
    before_stop: Callable[[], Awaitable[None]] | None = None,
    stopped: Awaitable[None] | None = None,
) -> None:
    """Serve until SIGTERM (or ``stopped`` completes): NOT_SERVING, ``before_stop``, stop(grace)."""
    names = list(services)
    await server.start()
    await set_serving(servicer, names, True)
    waiters = [asyncio.ensure_future(wait_for_signal())]
    if stopped is not None:
        waiters.append(asyncio.ensure_future(stopped))
    await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    for waiter in waiters:
        waiter.cancel()
    event(log, "stopping", grace_s=grace)
    await set_serving(servicer, names, False)
    if before_stop is not None:
        await before_stop()
    await server.stop(grace)
    event(log, "stopped")
