"""The gateway's process: uvicorn (websockets sans-I/O) in this event loop, stopped on SIGTERM.

On stop the gateway closes every WebSocket with 1001 (clients resume on another
gateway), stops uvicorn, then closes its gRPC channels.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Generator

import uvicorn

from services.archive.schema import SchemaBehind
from services.archive.settings import ArchiveSettings
from services.common import logs, loop, running
from services.common.dial import dial_addr, socket_host
from services.common.running import Running, Shutdown
from services.common.settings import from_env
from services.gateway.app import GOING_AWAY, create_app, state_of, websocket
from services.gateway.bot_client import BotClient
from services.gateway.http_protocol import bounded_http
from services.gateway.matchmaker_client import MatchmakerClient
from services.gateway.ports import ByPort, metrics_app
from services.gateway.settings import GatewaySettings
from services.gateway.socket_first import SocketFirst
from services.gateway.state import GatewayState
from services.gateway.table_client import LocalLinks
from services.gateway.ws_protocol import gateway_websocket

__all__ = ["GatewayServer", "create_server", "main", "serve"]

log = logging.getLogger("rackem.gateway")


class GatewayServer(uvicorn.Server):
    """uvicorn, minus its signal handlers (the caller owns them), closing sockets with 1001
    within ``grace`` seconds."""

    def __init__(self, config: uvicorn.Config, state: GatewayState, grace: float) -> None:
        super().__init__(config)
        self._state = state
        self.grace = grace

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in getattr(self, "servers", ()):
            server.close()
        await self._state.close_all(GOING_AWAY, self.grace)
        await super().shutdown(sockets)


def _listen(host: str, port: int, backlog: int, sndbuf: int = 0) -> socket.socket:
    """A listening TCP socket. Its protocol is set explicitly, so that asyncio turns Nagle's
    algorithm off on every accepted connection (it checks the protocol; without this, small
    frames written back to back wait ~40 ms for the client's delayed ACK). Accepted
    connections inherit ``sndbuf`` (0: the kernel's default). An IPv6 ``host`` may come in
    brackets."""
    host = socket_host(host)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if sndbuf:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return sock


async def create_server(
    settings: GatewaySettings,
    local_links: LocalLinks | None = None,
    matchmaker: MatchmakerClient | None = None,
    bots: BotClient | None = None,
    archive: ArchiveSettings | None = None,
) -> Running[GatewayServer]:
    """Start the gateway on ``settings.host:port`` (port 0 picks one) and return once it
    listens, with /metrics on ``metrics_host:metrics_port`` (``Running.metrics_port``).
    ``local_links``, ``matchmaker`` and ``bots``: services in this process (``create_app``).
    ``Running.service`` is the uvicorn server (its open connections: ``server_state``).
    ``archive`` with a ``database_url``: the profile store there (profiles.py), at this
    release's schema (``SchemaBehind`` if it is behind: run ``rackem migrate``)."""
    if settings.metrics_port and settings.metrics_port == settings.port:
        raise ValueError("METRICS_PORT must differ from PORT: /metrics is never public")
    app = create_app(settings, local_links, matchmaker, bots, archive)
    profiles = state_of(app).profiles
    if profiles is not None:  # before anything listens: a schema behind refuses the start
        await profiles.open()
    metrics_host = settings.metrics_host or settings.host
    msock = _listen(metrics_host, settings.metrics_port, 16)
    metrics_port = msock.getsockname()[1]
    config = uvicorn.Config(
        ByPort(
            SocketFirst(app, "/ws", websocket, settings.allowed_hosts),
            metrics_app(state_of(app).metrics),
            metrics_port,
        ),
        host=settings.host,
        port=settings.port,
        http=bounded_http(settings.header_timeout_ms / 1000),
        ws=gateway_websocket(settings.close_grace_ms / 1000),
        ws_max_size=settings.ws_max_size,
        ws_per_message_deflate=settings.ws_compression,
        lifespan="on",
        log_config=None,
        log_level="warning",  # uvicorn logs client addresses at info; we never log them
        access_log=False,
        proxy_headers=bool(settings.forwarded_allow_ips),
        forwarded_allow_ips=settings.forwarded_allow_ips,
        timeout_graceful_shutdown=max(1, round(settings.shutdown_grace_s)),
    )
    try:
        sock = _listen(settings.host, settings.port, config.backlog, settings.socket_sndbuf)
    except OSError:
        msock.close()
        raise
    port = sock.getsockname()[1]
    grace = float(config.timeout_graceful_shutdown or 5.0)
    server = GatewayServer(config, state_of(app), grace)
    task = asyncio.create_task(server.serve(sockets=[sock, msock]))
    while not server.started:
        if task.done():
            sock.close()
            msock.close()
            await task  # raises the startup failure
            raise RuntimeError("the gateway did not start")
        await asyncio.sleep(0.01)

    async def exit_server(grace: float) -> None:  # 1001 to every socket, then uvicorn stops
        server.grace = grace
        server.should_exit = True
        await task

    shutdown = Shutdown()
    shutdown.push(exit_server)
    return Running(
        port,
        dial_addr(settings.host, port),
        server,
        shutdown,
        grace=grace,
        log=log,
        stopping="stopping",
        metrics_port=metrics_port,
    )


async def serve(settings: GatewaySettings, archive: ArchiveSettings | None = None) -> None:
    """Serve until SIGTERM or SIGINT (handled from before the port opens), then stop."""
    await running.serve(create_server(settings, archive=archive))


def main() -> None:
    settings = from_env(GatewaySettings)
    logs.configure("gateway", settings.log_level)
    try:
        loop.run(serve(settings, from_env(ArchiveSettings)))
    except SchemaBehind as exc:  # refused to start: said once, plainly, without a trace
        logs.event(log, "archive_schema_behind", logging.ERROR, message=str(exc))
        raise SystemExit(1) from None
