"""Table-service fixtures: a replica on port 0 with short clocks and the memory store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from services._gen.rackem.v1 import table_pb2_grpc
from services.common.channels import open_channel
from services.common.registry import MemoryRegistry
from services.common.running import Running
from services.common.running import Running as BotRunning
from services.gateway.table_client import Link, dial
from services.table.server import create_server
from services.table.store.memory import MemoryStore
from table.table_players import ServerFactory, fast_settings


@pytest.fixture
async def table_server(bot_server: BotRunning) -> AsyncIterator[Running]:
    """A table replica with the memory store, asking the in-process bot service for moves."""
    running = await create_server(
        fast_settings(), store=MemoryStore(), registry=MemoryRegistry(), bot_addr=bot_server.addr
    )
    yield running
    await running.stop(0)


@pytest.fixture
async def stub(table_server: Running) -> AsyncIterator[table_pb2_grpc.TableAsyncStub]:
    async with open_channel(table_server.addr) as channel:
        yield table_pb2_grpc.TableStub(channel)


@pytest.fixture
async def start_table_server(bot_server: BotRunning) -> AsyncIterator[ServerFactory]:
    """Start replicas with ``fast_settings(**overrides)`` (memory store unless given one)."""
    started: list[Running] = []

    async def start(**overrides: Any) -> Running:
        deps = {
            k: overrides.pop(k)
            for k in ("store", "registry", "bot_addr", "archive")
            if k in overrides
        }
        deps.setdefault("bot_addr", bot_server.addr)
        running = await create_server(fast_settings(**overrides), **deps)
        started.append(running)
        return running

    yield start
    for running in reversed(started):
        if not running.service.tables.draining:
            await running.stop(0)


@pytest.fixture
async def link(stub: table_pb2_grpc.TableAsyncStub) -> AsyncIterator[Link]:
    """The gateway's link client over ``stub``'s channel: the table's calls, as a gateway
    makes them."""
    opened = dial(stub)
    yield opened
    await opened.close()
