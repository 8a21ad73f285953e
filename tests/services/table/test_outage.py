"""Redis unreachable for a while: the tables hold their moves back and go on once it is
back, and a move refused meanwhile is kept once when retried by its id. On a Redis of
the test's own (Debian's redis-server, AOF), stopped and started again on its port."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator

import pytest
from feeds import reading
from redis_engines import Single

from rackcore import verify
from rackcore.bots import choose
from services._gen.rackem.v1 import table_pb2, table_pb2_grpc
from services.common.channels import open_channel
from services.common.errors import ServiceError
from services.common.redis_client import connect
from services.common.registry import RedisRegistry
from services.common.running import Running
from services.convert import move_to_pb
from services.table.store.redis import RedisStore
from table.decoded import view_of
from table.table_players import SeatPlayer, ServerFactory, create_table, linked


@pytest.fixture
async def replica(
    own_redis: Single, start_table_server: ServerFactory
) -> AsyncIterator[tuple[Running, RedisStore]]:
    client = connect(own_redis.url)
    store = RedisStore(client)
    # Leases outlast the outage: this is Redis gone for a while, not a replica.
    running = await start_table_server(
        store=store, registry=RedisRegistry(client), lease_ms=30_000, store_hold_ms=15_000
    )
    yield running, store
    await running.stop(0)  # before its Redis client closes
    await client.aclose()


async def _outage(engine: Single, seconds: float) -> None:
    engine.server.stop()
    await asyncio.sleep(seconds)
    await asyncio.to_thread(engine.server.start)


async def test_moves_made_while_redis_restarts_wait_and_the_match_goes_on(
    own_redis: Single,
    replica: tuple[Running, RedisStore],
    caplog: pytest.LogCaptureFixture,
) -> None:
    running, store = replica
    caplog.set_level(logging.INFO, logger="rackem")
    async with open_channel(running.addr) as channel:
        stub = table_pb2_grpc.TableStub(channel)
        reply = await create_table(stub, humans=2, bots=0, target=75)
        players = [SeatPlayer(stub, reply.table_id, reply.tokens[s], s) for s in range(2)]
        games = asyncio.gather(*(p.run() for p in players))
        while sum(len(p.views) for p in players) < 10:
            await asyncio.sleep(0.01)
        await _outage(own_redis, 1.5)  # a restart: AOF brings every table back
        async with asyncio.timeout(120):
            await games  # every move answered: none refused for the outage
    held = [r for r in caplog.records if r.getMessage() == "store_unavailable"]
    assert held, "no move met the outage"
    assert not [r for r in caplog.records if r.getMessage() == "store_error"]
    stored = await store.load(reply.table_id)
    assert stored is not None and stored.state.over
    async with open_channel(running.addr) as channel:
        stub = table_pb2_grpc.TableStub(channel)
        record = await stub.GetRecord(table_pb2.SummaryRequest(table_id=reply.table_id))
    log = json.loads(record.log_json)
    assert verify(log)["valid"] and log["moves"] == stored.moves


async def test_a_move_refused_for_a_long_outage_is_kept_once_when_retried_by_its_id(
    own_redis: Single, start_table_server: ServerFactory
) -> None:
    client = connect(own_redis.url)
    store = RedisStore(client)
    running = await start_table_server(
        store=store, registry=RedisRegistry(client), lease_ms=30_000, store_hold_ms=300
    )
    try:
        async with (
            open_channel(running.addr) as channel,
            contextlib.AsyncExitStack() as stack,
        ):
            stub = table_pb2_grpc.TableStub(channel)
            reply = await create_table(stub, humans=1, bots=1)
            seat = table_pb2.SeatRequest(table_id=reply.table_id, token=reply.tokens[0])
            link = await stack.enter_async_context(linked(stub))
            views = reading(link.subscribe, seat)
            async for tv in views:
                if view_of(tv).my_turn:
                    break
            views.close()
            request = table_pb2.SubmitMoveRequest(
                table_id=reply.table_id,
                token=reply.tokens[0],
                move=move_to_pb(choose(view_of(tv), "medium", seed=1)),
                move_id="the-move",
            )
            before = len((await store.load(reply.table_id)).moves)  # type: ignore[union-attr]
            own_redis.server.stop()
            with pytest.raises(ServiceError) as refused:
                await link.submit(request, 5)
            assert refused.value.code == "unavailable"
            await asyncio.to_thread(own_redis.server.start)
            accepted = await link.submit(request, 5)
            again = await link.submit(request, 5)  # the same id once more: the same answer
            assert again == accepted
        stored = await store.load(reply.table_id)
        assert stored is not None
        assert stored.moves[before]["seat"] == 0
        assert sum(1 for m in stored.moves[before:] if m.get("by") == "human") == 1
    finally:
        await running.stop(0)
        await client.aclose()
