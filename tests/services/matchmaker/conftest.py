"""Fixtures for the matchmaker tests: stores (memory and a real Redis), recording table
replicas, and running matchmakers with a client stub over a real channel."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pytest
import redis.asyncio as aioredis

from services._gen.rackem.v1 import matchmaker_pb2_grpc
from services.common.channels import open_channel
from services.common.redis_client import Durability, connect
from services.common.registry import MemoryRegistry, Registry
from services.common.running import Running
from services.matchmaker.codes import CodeSource, new_code
from services.matchmaker.records import NewTable, Placed, Sitter
from services.matchmaker.server import create_server
from services.matchmaker.settings import MatchmakerSettings
from services.matchmaker.store import Store
from services.matchmaker.store.memory import MemoryStore
from services.matchmaker.store.redis import RedisStore

from .tableserver import RecordingTable, recording_table, register

if TYPE_CHECKING:
    from services._gen.rackem.v1.matchmaker_pb2_grpc import MatchmakerAsyncStub as Stub

# Short durations: fill timers, ticks and polls in tens of milliseconds.
FAST = MatchmakerSettings(
    host="127.0.0.1",
    port=0,
    fill_ms=150,
    fill_lone_ms=300,
    tick_ms=20,
    watch_poll_ms=200,
    retry_ms=50,
    create_timeout_ms=2_000,
    grace_s=1.0,
)
SLOW_FILL = replace(FAST, fill_ms=60_000, fill_lone_ms=60_000)

STORES = ["memory", pytest.param("redis", marks=pytest.mark.containers)]


class BrokenStore(MemoryStore):
    """A store with a bug: every quick match raises an error holding the player's name."""

    async def quick_join(self, table: NewTable, sitter: Sitter, *args: Any) -> Placed | None:
        raise RuntimeError(f"bug while seating {sitter.name}")


def namespace() -> str:
    """A key namespace of its own per test (no hash tag: the homes bring theirs), so tests
    share one Redis."""
    return f"mm:test-{secrets.token_hex(4)}:"


class RedisFactory:
    """Redis stores on one namespace, each with its own client: separate replicas."""

    def __init__(self, url: str, durability: Durability | None = None) -> None:
        self.url = url
        self.namespace = namespace()
        self.durability = durability
        self.clients: list[aioredis.Redis] = []

    def store(self) -> RedisStore:
        client = connect(self.url)
        self.clients.append(client)
        return RedisStore(client, self.namespace, durability=self.durability)

    async def close(self) -> None:
        for client in self.clients:
            await client.aclose()


@pytest.fixture
async def redis_stores(redis_url: str) -> AsyncIterator[RedisFactory]:
    factory = RedisFactory(redis_url)
    yield factory
    await factory.close()


@pytest.fixture(params=STORES)
async def stores(request: pytest.FixtureRequest) -> AsyncIterator[Callable[[], Store]]:
    """Makes stores that share one state: every call is another replica's view of it."""
    if request.param == "memory":
        shared = MemoryStore()
        yield lambda: shared
        return
    factory = RedisFactory(request.getfixturevalue("redis_url"))
    yield factory.store
    await factory.close()


@pytest.fixture
async def store(stores: Callable[[], Store]) -> Store:
    return stores()


@pytest.fixture
def registry() -> MemoryRegistry:
    return MemoryRegistry()


@pytest.fixture
async def table(registry: Registry) -> AsyncIterator[RecordingTable]:
    """One recording table replica, registered as live."""
    async with recording_table() as replica:
        await register(registry, replica, "r1")
        yield replica


class Cluster:
    """Matchmaker replicas started on demand, sharing one store state (each replica its
    own store client, for Redis); stopped at the end of the test, before the stores."""

    def __init__(
        self, stack: AsyncExitStack, registry: Registry, stores: Callable[[], Store]
    ) -> None:
        self._stack = stack
        self.registry = registry
        self.stores = stores

    async def start(
        self, settings: MatchmakerSettings = FAST, codes: CodeSource = new_code
    ) -> tuple[Running, Stub]:
        running = await create_server(settings, self.stores(), self.registry, codes=codes)
        self._stack.push_async_callback(running.stop, 0.5)
        return running, await self.client(running)

    async def client(self, running: Running) -> Stub:
        """A stub on a channel of its own."""
        channel = open_channel(running.addr)
        self._stack.push_async_callback(channel.close, None)
        return matchmaker_pb2_grpc.MatchmakerStub(channel)


@pytest.fixture
async def cluster(stores: Callable[[], Store], registry: Registry) -> AsyncIterator[Cluster]:
    async with AsyncExitStack() as stack:
        yield Cluster(stack, registry, stores)


@pytest.fixture
async def redis_cluster(redis_stores: RedisFactory, registry: Registry) -> AsyncIterator[Cluster]:
    """Replicas on Redis only: for what only Redis can show (many clients, many replicas)."""
    async with AsyncExitStack() as stack:
        yield Cluster(stack, registry, redis_stores.store)
