"""One contract for the replica registry: memory, and Redis as a single server, a
3-primary cluster and behind Sentinel (tests/redis_engines.py)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator

import pytest
from redis_engines import KINDS, Engines

from services.common.redis_client import connect
from services.common.registry import MemoryRegistry, RedisRegistry, Registry, Replica


@pytest.fixture(params=["memory", *KINDS])
async def registry(
    request: pytest.FixtureRequest, redis_engines: Engines
) -> AsyncIterator[Registry]:
    if request.param == "memory":
        yield MemoryRegistry()
        return
    client = connect(redis_engines.url(request.param))
    # The registry's keys are the deployment's own: start each test from none.
    for replica in await RedisRegistry(client).live():
        await RedisRegistry(client).remove(replica.id)
    yield RedisRegistry(client)
    await client.aclose()


def _replica(load: int = 0, draining: bool = False) -> Replica:
    rid = f"r-{secrets.token_hex(4)}"
    return Replica(rid, f"10.0.0.{load % 250}:50052", load, draining)


async def test_heartbeats_are_live_with_their_latest_load(registry: Registry) -> None:
    a, b = _replica(3), _replica(5, draining=True)
    await registry.heartbeat(a, 5_000)
    await registry.heartbeat(b, 5_000)
    await registry.heartbeat(Replica(a.id, a.addr, 7), 5_000)
    live = {r.id: r for r in await registry.live()}
    assert live == {a.id: Replica(a.id, a.addr, 7), b.id: b}


async def test_a_replica_that_stops_heartbeating_expires(registry: Registry) -> None:
    gone, staying = _replica(), _replica()
    await registry.heartbeat(gone, 100)
    await registry.heartbeat(staying, 10_000)
    await asyncio.sleep(0.3)
    assert [r.id for r in await registry.live()] == [staying.id]


async def test_a_removed_replica_is_not_live(registry: Registry) -> None:
    a, b = _replica(), _replica()
    await registry.heartbeat(a, 5_000)
    await registry.heartbeat(b, 5_000)
    await registry.remove(a.id)
    await registry.remove("never-there")
    assert [r.id for r in await registry.live()] == [b.id]
