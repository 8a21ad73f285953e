"""A real gateway on a free port, and helpers to talk to it over real sockets."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from rackem.seam.bots import LocalBots
from rackem.seam.matchmaker import LocalMatchmaker
from rackem.seam.tables import LocalTables
from services.common.registry import MemoryRegistry
from services.common.running import Running
from services.common.running import Running as BotRunning
from services.common.running import Running as MatchmakerRunning
from services.common.running import Running as TableRunning
from services.gateway.server import create_server
from services.gateway.settings import GatewaySettings
from services.matchmaker.server import create_server as create_matchmaker
from services.matchmaker.settings import MatchmakerSettings
from services.table.server import create_server as create_table_server
from services.table.settings import TableSettings
from services.table.store.memory import MemoryStore

# Nothing listens on port 1: calls to the services fail at once as `unavailable`.
NOWHERE = "127.0.0.1:1"

StartGateway = Callable[..., Awaitable[Running]]


def settings(**overrides: Any) -> GatewaySettings:
    values: dict[str, Any] = {
        "host": "127.0.0.1",
        "port": 0,
        "metrics_port": 0,
        "matchmaker_addr": NOWHERE,
        "table_addr": NOWHERE,
        "bot_addr": NOWHERE,
        "rpc_timeout_s": 2.0,
        "shutdown_grace_s": 1.0,
        # Clients here play bots that answer at once (no bot delay), faster than a person
        # could: the per-connection limit is tested with its own settings.
        "msg_rate": 200.0,
        "msg_burst": 400,
        # A busy test machine is not overload to refuse newcomers for; the admission
        # tests set their own limits.
        "overload_lag_ms": 0,
        "overload_answer_ms": 0,
    }
    values.update(overrides)
    return GatewaySettings(**values)


@pytest.fixture
async def start_gateway() -> AsyncIterator[StartGateway]:
    """``await start_gateway(**settings)``: a started gateway, stopped after the test."""
    running: list[Running] = []

    async def start(**overrides: Any) -> Running:
        # Services in this process, reached without a socket (rackem up's seam).
        matchmaker = overrides.pop("matchmaker", None)
        local_links = overrides.pop("local_links", None)
        bots = overrides.pop("bots", None)
        archive = overrides.pop("archive", None)  # ArchiveSettings: the profile store
        server = await create_server(
            settings(**overrides),
            local_links=local_links,
            matchmaker=matchmaker,
            bots=bots,
            archive=archive,
        )
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
    """``path`` on the gateway: ``/metrics`` on its metrics port, the rest on its port."""
    port = server.metrics_port if path == "/metrics" else server.port
    return f"http://127.0.0.1:{port}{path}"


async def metrics_text(server: Running) -> str:
    """The gateway's Prometheus text."""
    async with httpx.AsyncClient(trust_env=False) as http:
        response = await http.get(http_url(server, "/metrics"))
        assert response.status_code == 200
        return response.text


@dataclass
class Services:
    """Real bot, table and matchmaker services in this process, on free ports."""

    bot: BotRunning
    table: TableRunning
    matchmaker: MatchmakerRunning
    store: MemoryStore
    registry: MemoryRegistry


def table_settings(**overrides: Any) -> TableSettings:
    values: dict[str, Any] = {
        "host": "127.0.0.1",
        "port": 0,
        "bot_delay_ms": 0,
        "continue_ms": 5_000,
        "lease_ms": 600,
        "sweep_ms": 100,
        "heartbeat_ms": 100,
        "heartbeat_ttl_ms": 300,
        "stop_grace_ms": 0,
    }
    values.update(overrides)
    return TableSettings(**values)


StartServices = Callable[..., Awaitable[Services]]


@pytest.fixture
async def start_services(bot_server: BotRunning) -> AsyncIterator[StartServices]:
    """``await start_services(**table_settings)``: a table replica and a matchmaker."""
    started: list[Services] = []

    async def start(**table_overrides: Any) -> Services:
        store = MemoryStore()
        registry = MemoryRegistry()
        table = await create_table_server(
            table_settings(**table_overrides),
            store=store,
            registry=registry,
            bot_addr=bot_server.addr,
        )
        mm_settings = MatchmakerSettings(
            host="127.0.0.1",
            port=0,
            table_addr=table.addr,
            fill_ms=300,
            fill_lone_ms=300,
            tick_ms=50,
            rematch_ms=3_000,  # a rematch's wait for the players who did not answer yet
        )
        matchmaker = await create_matchmaker(mm_settings, registry=registry)
        started.append(Services(bot_server, table, matchmaker, store, registry))
        return started[-1]

    yield start
    for running in started:
        await running.matchmaker.stop(0)
        if not running.table.service.tables.draining:
            await running.table.stop(0)


@pytest.fixture
async def services(start_services: StartServices) -> Services:
    return await start_services()


@pytest.fixture(params=["grpc", "in_process"])
async def system(
    request: pytest.FixtureRequest, services: Services, start_gateway: StartGateway
) -> Running:
    """A gateway in front of ``services``: it calls the matchmaker and the bot service and
    links to the table replica over gRPC, or in process through ``rackem up``'s seam
    (rackem/seam/)."""
    in_process = request.param == "in_process"
    tables = LocalTables({services.table.addr: services.table.service})
    return await start_gateway(
        matchmaker_addr=services.matchmaker.addr,
        table_addr=services.table.addr,
        bot_addr=services.bot.addr,
        matchmaker=LocalMatchmaker(services.matchmaker.service) if in_process else None,
        local_links=tables.link if in_process else None,
        bots=LocalBots(services.bot.service) if in_process else None,
    )
