"""A real gateway on a free port, and helpers to talk to it over real sockets."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from services.gateway.server import Running, create_server
from services.gateway.settings import GatewaySettings

# Nothing listens on port 1: calls to the services fail at once as `unavailable`.
NOWHERE = "127.0.0.1:1"

StartGateway = Callable[..., Awaitable[Running]]


def settings(**overrides: Any) -> GatewaySettings:
    values: dict[str, Any] = {
        "host": "127.0.0.1",
        "port": 0,
        "matchmaker_addr": NOWHERE,
        "table_addr": NOWHERE,
        "rpc_timeout_s": 2.0,
        "shutdown_grace_s": 1.0,
    }
    values.update(overrides)
    return GatewaySettings(**values)


@pytest.fixture
async def start_gateway() -> AsyncIterator[StartGateway]:
    """``await start_gateway(**settings)``: a started gateway, stopped after the test."""
    running: list[Running] = []

    async def start(**overrides: Any) -> Running:
        server = await create_server(settings(**overrides))
        running.append(server)
        return server

    yield start
    for server in running:
        await server.stop()


@pytest.fixture
async def gateway(start_gateway: StartGateway) -> Running:
    return await start_gateway()


def ws_url(server: Running) -> str:
    return f"ws://127.0.0.1:{server.port}/ws"


def http_url(server: Running, path: str) -> str:
    return f"http://127.0.0.1:{server.port}{path}"
