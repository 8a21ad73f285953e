"""The matchmaker's writes wait for a replica (``REDIS_WAIT_REPLICAS``), over real Redis.

A seat, a room, a join, a start, a leave or a rematch is answered only once the replicas
asked for have its writes (``WAIT`` on the write's own connection); fewer in
``REDIS_WAIT_MS`` answers ``unavailable`` and has a Sentinel client ask for its primary
again. So a write that a primary about to be demoted took (cut from its replicas) is
never told to a player as done (docs/partitions.md, ``redis-primary-minority``).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

import grpc
import pytest
from redis_engines import Engines, SentinelGroup, Single

import services.common.redis_client as redis_client
from rackcore import Rules
from services._gen.rackem.v1 import matchmaker_pb2 as pb
from services._gen.rackem.v1 import matchmaker_pb2_grpc
from services.common.channels import open_channel
from services.common.errors import StoreUnavailable, from_rpc_error
from services.common.redis_client import Durability, connect
from services.common.registry import Registry
from services.convert import rules_to_pb
from services.matchmaker.ids import hash_token, new_table_id, new_token
from services.matchmaker.records import NewTable, Sitter, Timings
from services.matchmaker.server import create_server
from services.matchmaker.store.redis import RedisStore
from services.matchmaker.store.redis_keys import Layout

from .conftest import FAST, namespace
from .tableserver import RecordingTable

T = Timings(fill_ms=15_000, fill_lone_ms=30_000, claim_ms=10_000, retry_ms=1_000, max_attempts=3)
NOW = 1_700_000_000_000
ALONE = Durability(1, 100)  # one replica asked for, where there is none


def _sitter(name: str) -> Sitter:
    return Sitter(name, hash_token(new_token()))


def _private(code: str) -> NewTable:
    return NewTable(new_table_id(), code, False, Rules(players=2), "hard", 0)


def _quick(code: str) -> NewTable:
    return NewTable(new_table_id(), code, True, Rules(players=2), "medium", -1)


async def test_with_no_replica_no_seat_room_or_join_is_answered(
    own_redis: Single, caplog: pytest.LogCaptureFixture
) -> None:
    """REDIS_WAIT_REPLICAS=1 and no replica: QuickMatch, CreateTable and JoinByCode answer
    ``unavailable`` (logged as the write not replicated), never ``seated``."""
    caplog.set_level(logging.INFO, logger="rackem")
    ready = connect(own_redis.url)  # a room to join, made without waiting
    opened = await RedisStore(ready).create_private(
        _private("JNMEXY"), _sitter("Ann"), NOW, T, None
    )
    assert opened is not None
    settings = replace(FAST, redis_url=own_redis.url, redis_wait_replicas=1, redis_wait_ms=100)
    running = await create_server(settings)
    channel = open_channel(running.addr)
    try:
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        calls: list[Any] = [
            stub.QuickMatch(pb.QuickMatchRequest(name="Bob", players=2)),
            stub.CreateTable(pb.CreatePrivateRequest(name="Cy")),
            stub.JoinByCode(pb.JoinRequest(code="JNMEXY", name="Di")),
        ]
        for call in calls:
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await call
            assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
            assert from_rpc_error(caught.value).code == "unavailable"
    finally:
        await channel.close(None)
        await running.stop(0.5)
        await ready.aclose()
    outages = [r for r in caplog.records if r.getMessage() == "store_unavailable"]
    assert {r.fields["rpc"] for r in outages} == {"QuickMatch", "CreateTable", "JoinByCode"}  # type: ignore[attr-defined]
    assert {r.fields["error_type"] for r in outages} == {"NotReplicated"}  # type: ignore[attr-defined]


async def test_with_no_replica_every_write_a_player_is_answered_from_fails(
    own_redis: Single,
) -> None:
    """Each store operation a caller's answer rests on raises ``StoreUnavailable`` when
    its write is not replicated: seating, opening, joining, claiming (a start), finishing
    a start, leaving, and opening a rematch."""
    plain_client, durable_client = connect(own_redis.url), connect(own_redis.url)
    space = namespace()
    plain = RedisStore(plain_client, space)
    durable = RedisStore(durable_client, space, durability=ALONE)
    try:
        with pytest.raises(StoreUnavailable) as caught:
            await durable.quick_join(_quick("QUCKAA"), _sitter("Ann"), NOW, T, "me")
        assert caught.value.reason == "NotReplicated" and not caught.value.again
        with pytest.raises(StoreUnavailable):
            await durable.create_private(_private("RMAAAB"), _sitter("Ann"), NOW, T, None)
        ann, bob = _sitter("Ann"), _sitter("Bob")
        three = NewTable(new_table_id(), "RMAAAC", False, Rules(players=3), "hard", 0)
        room = await plain.create_private(three, ann, NOW, T, None)
        assert room is not None
        assert await plain.join_code("RMAAAC", bob, NOW, T, "me")
        with pytest.raises(StoreUnavailable):
            await durable.join_code("RMAAAC", _sitter("Cy"), NOW, T, "me")
        with pytest.raises(StoreUnavailable):
            await durable.leave(bob.token_hash, NOW, T)
        with pytest.raises(StoreUnavailable):
            await durable.claim(room.table_id, "me", NOW, T)
        with pytest.raises(StoreUnavailable):
            await durable.finish(room.table_id, "me", "r1", [(1, "Bot")], T)
        # Not undone: each write is on the primary, only never answered (a failover that
        # demotes it discards them; else they stand, as here).
        record = await plain.table(room.table_id)
        assert record is not None and record.status == "started"
        assert [s.name for s in record.seats] == ["Ann", "Bot", "Cy"]
        seats = [("Ann", False), ("Bot", True), ("Cy", False)]
        with pytest.raises(StoreUnavailable):
            await durable.rematch(room.table_id, _private("RMAAAD"), seats, 0, ann, NOW, T, "me")
        # Reads wait for nothing: the same store reads what is there.
        record = await durable.table(room.table_id)
        assert record is not None and record.status == "started"
    finally:
        await plain_client.aclose()
        await durable_client.aclose()


async def test_a_short_wait_has_the_sentinel_client_ask_for_its_primary_again(
    redis_engines: Engines, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two replicas asked for, one there: the call fails, and the client asks the
    Sentinels again (``recheck_primary``), as the table's writes do."""
    asked: list[object] = []
    ask = redis_client.recheck_primary
    monkeypatch.setattr(redis_client, "recheck_primary", lambda c: (asked.append(c), ask(c)))
    client = connect(redis_engines.url("sentinel"))
    store = RedisStore(client, namespace(), durability=Durability(2, 100))
    try:
        with pytest.raises(StoreUnavailable):
            await store.create_private(_private("SHRTAA"), _sitter("Ann"), NOW, T, None)
        assert asked and all(c is client for c in asked)
    finally:
        await client.aclose()


async def test_with_the_replica_every_answer_is_on_it(
    redis_engines: Engines, registry: Registry, table: RecordingTable
) -> None:
    """Behind Sentinel with REDIS_WAIT_REPLICAS=1: a room, a join, a start and the seat
    tokens are answered, and the replica holds each before its answer."""
    group = redis_engines.get("sentinel")
    assert isinstance(group, SentinelGroup)
    client = connect(group.url)
    space = namespace()
    store = RedisStore(client, space, durability=Durability(1, 2_000))
    settings = replace(FAST, redis_wait_replicas=1, redis_wait_ms=2_000)
    running = await create_server(settings, store, registry)
    channel = open_channel(running.addr)
    keys = Layout(space)
    replica = group.replica if group.current_primary() is group.primary else group.primary
    try:
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        four = rules_to_pb(Rules(players=4))
        made = await stub.CreateTable(pb.CreatePrivateRequest(name="Ann", rules=four))
        joined = await stub.JoinByCode(pb.JoinRequest(code=made.code, name="Bob"))
        left = await stub.JoinByCode(pb.JoinRequest(code=made.code, name="Cy"))
        await stub.Leave(pb.TokenRequest(token=left.token))
        table_id = made.table_id
        home = keys.room(table_id).table(table_id)
        with replica.client() as copy:
            for seated in (made, joined):
                assert copy.get(keys.token(hash_token(seated.token)))
            assert copy.hget(home, "n1") == b"Bob" and copy.hget(home, "n2") == b""
        lobby = await stub.Start(pb.TokenRequest(token=made.token))
        assert lobby.status == "started"
        with replica.client() as copy:
            assert copy.hget(home, "status") == b"started"
        assert [call.table_id for call in table.calls] == [table_id]
    finally:
        await channel.close(None)
        await running.stop(0.5)
        await client.aclose()
