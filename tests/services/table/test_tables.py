"""Several replicas over one store: routing to the owner, hand-over on stop, the sweeper."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace

import grpc

from rackcore import verify
from services._gen.rackem.v1 import game_pb2, table_pb2, table_pb2_grpc
from services.common.channels import open_channel
from services.common.errors import ServiceError, from_rpc_error
from services.common.registry import MemoryRegistry
from services.table.store.memory import MemoryStore
from services.table.stored import SeatMeta, TableMeta, TableState
from table.decoded import message_of
from table.table_players import SeatPlayer, ServerFactory, create_table, linked, play_to_the_end


async def test_a_replica_that_does_not_own_a_table_names_its_owner(
    start_table_server: ServerFactory,
) -> None:
    store, registry = MemoryStore(), MemoryRegistry()
    owner = await start_table_server(store=store, registry=registry)
    other = await start_table_server(store=store, registry=registry)
    async with (
        open_channel(owner.addr) as a,
        open_channel(other.addr) as b,
    ):
        created = await create_table(table_pb2_grpc.TableStub(a), humans=1, bots=1)
        assert created.replica == owner.addr
        try:
            await table_pb2_grpc.TableStub(b).GetSummary(
                table_pb2.SummaryRequest(table_id=created.table_id)
            )
        except grpc.aio.AioRpcError as exc:
            err = from_rpc_error(exc)
            assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert (err.code, err.owner) == ("wrong_replica", owner.addr)
        else:
            raise AssertionError("the other replica served a table it does not own")


async def test_a_stopping_replica_hands_its_tables_over_and_no_match_ends(
    start_table_server: ServerFactory,
) -> None:
    store, registry = MemoryStore(), MemoryRegistry()
    first = await start_table_server(store=store, registry=registry)
    second = await start_table_server(store=store, registry=registry)
    async with (
        open_channel(first.addr) as a,
        open_channel(second.addr) as b,
    ):
        stub_a, stub_b = table_pb2_grpc.TableStub(a), table_pb2_grpc.TableStub(b)
        created = await create_table(stub_a, humans=2, bots=0)
        tid = created.table_id
        players = [SeatPlayer(stub_a, tid, created.tokens[s], s) for s in range(2)]
        playing = [asyncio.create_task(p.run()) for p in players]
        async with asyncio.timeout(20):
            while max((v.version for p in players for v in p.views), default=0) < 10:
                await asyncio.sleep(0.005)
        await first.stop(1)  # in-flight calls finish; streams end with shutting_down
        for outcome in await asyncio.gather(*playing, return_exceptions=True):
            assert isinstance(outcome, ServiceError)
            assert outcome.code in ("shutting_down", "unavailable", "wrong_replica")
        version = max(v.version for p in players for v in p.views)
        assert any(r.id == second.service.tables.replica_id for r in await registry.live())
        assert all(r.id != first.service.tables.replica_id for r in await registry.live())
        for player in players:  # the gateways subscribe again, through the other replica
            player.stub = stub_b
        await play_to_the_end(players)
        record = await stub_b.GetRecord(table_pb2.SummaryRequest(table_id=tid))
    log = json.loads(record.log_json)
    assert verify(log)["finished"] and len(log["moves"]) > version
    assert all(message_of(p.views[-1])["ended_reason"] == "finished" for p in players)


async def test_the_sweeper_adopts_a_table_nobody_asks_for(
    start_table_server: ServerFactory,
) -> None:
    store, registry = MemoryStore(), MemoryRegistry()
    # No reconnect grace: the bot need not wait for the human, who never connects.
    clocks = {"decision_ms": 600_000, "reconnect_grace_ms": 0}
    first = await start_table_server(store=store, registry=registry, **clocks)
    second = await start_table_server(store=store, registry=registry, **clocks)
    async with open_channel(first.addr) as a:
        created = await create_table(table_pb2_grpc.TableStub(a), humans=1, bots=1)
    table = first.service.tables.live[created.table_id]
    async with asyncio.timeout(10):  # the bot moves at once; then the human's clock runs long
        while table.match.turn != 0:
            await asyncio.sleep(0.01)
    await first.stop(0)
    version, state = table.version, table.state.to_json()  # as handed over
    async with asyncio.timeout(10):
        while created.table_id not in second.service.tables.live:
            await asyncio.sleep(0.02)
    adopted = second.service.tables.live[created.table_id]
    handed = TableState.from_json(state)
    # The human to move gets a whole clock again from the adoption (adoption.restart_clocks).
    assert adopted.version == version and adopted.state.deadline_ms >= handed.deadline_ms
    assert replace(adopted.state, deadline_ms=0) == replace(handed, deadline_ms=0)
    assert await store.holder(created.table_id) == second.service.tables.config.owner


async def test_a_move_id_counts_once_across_a_hand_over(start_table_server: ServerFactory) -> None:
    store, registry = MemoryStore(), MemoryRegistry()
    first = await start_table_server(store=store, registry=registry)
    second = await start_table_server(store=store, registry=registry)
    async with (
        open_channel(first.addr) as a,
        open_channel(second.addr) as b,
    ):
        stub_a, stub_b = table_pb2_grpc.TableStub(a), table_pb2_grpc.TableStub(b)
        created = await create_table(stub_a, humans=2, bots=0)
        mover = first.service.tables.live[created.table_id].match.turn
        request = table_pb2.SubmitMoveRequest(
            table_id=created.table_id,
            token=created.tokens[mover],
            move=game_pb2.Move(act="draw", source="stock"),
            move_id="only-once",
            expected_version=0,
        )
        async with linked(stub_a) as link:
            earlier = await link.submit(request, 5)
        await first.stop(0)
        async with linked(stub_b) as link:
            again = await link.submit(request, 5)
        assert again == earlier == 1
        summary = await stub_b.GetSummary(table_pb2.SummaryRequest(table_id=created.table_id))
        assert summary.version == 1 and summary.replica == second.addr


async def test_a_create_repeated_at_another_replica_names_the_owner(
    start_table_server: ServerFactory,
) -> None:
    store, registry = MemoryStore(), MemoryRegistry()
    owner = await start_table_server(store=store, registry=registry)
    other = await start_table_server(store=store, registry=registry)
    digest = hashlib.sha256(b"ef" * 16).hexdigest()
    request = table_pb2.CreateTableRequest(
        table_id="t-placed",
        seats=[table_pb2.SeatSpec(name="Ann", token_hash=digest), table_pb2.SeatSpec(bot=True)],
    )
    async with (
        open_channel(owner.addr) as a,
        open_channel(other.addr) as b,
    ):
        first = await table_pb2_grpc.TableStub(a).CreateTable(request)
        again = await table_pb2_grpc.TableStub(b).CreateTable(request)
    assert again == first and again.replica == owner.addr
    assert "t-placed" not in other.service.tables.live


async def test_a_table_that_will_not_rebuild_is_unavailable_not_a_crash(
    start_table_server: ServerFactory,
) -> None:
    store = MemoryStore()
    server = await start_table_server(store=store)
    seats = (SeatMeta("Ann", False, "medium", "ab" * 32), SeatMeta("Bot", True, "easy", ""))
    meta = TableMeta("t-broken", "", {"players": 2}, "00" * 32, seats, 0)
    await store.create(meta, TableState.new(2), "gone 127.0.0.1:1", 5_000)
    throw_first = {"seat": 0, "act": "throw"}  # not a legal first move
    assert (
        await store.append("t-broken", "gone 127.0.0.1:1", 0, throw_first, TableState.new(2))
        == "ok"
    )
    await store.release("t-broken", "gone 127.0.0.1:1")
    async with open_channel(server.addr) as channel:
        stub = table_pb2_grpc.TableStub(channel)
        request = table_pb2.SummaryRequest(table_id="t-broken")
        try:
            await stub.GetSummary(request)
        except grpc.aio.AioRpcError as exc:
            assert exc.code() == grpc.StatusCode.UNAVAILABLE
        else:
            raise AssertionError("a table with a bad log was served")
        assert await store.holder("t-broken") is None  # the lease is not kept
        created = await create_table(stub, humans=1, bots=1)  # the replica serves on
        assert created.replica == server.addr


class _RenewCalls(MemoryStore):
    """The memory store, keeping the ids of each ``renew_many`` call."""

    def __init__(self) -> None:
        super().__init__()
        self.rounds: list[list[str]] = []

    async def renew_many(self, table_ids: Sequence[str], owner: str, lease_ms: int) -> list[bool]:
        self.rounds.append(list(table_ids))
        return await super().renew_many(table_ids, owner, lease_ms)


async def test_a_lost_lease_among_many_closes_only_that_table(
    start_table_server: ServerFactory,
) -> None:
    store = _RenewCalls()
    server = await start_table_server(store=store, decision_ms=600_000)
    owner = server.service.tables.config.owner
    async with open_channel(server.addr) as channel:
        stub = table_pb2_grpc.TableStub(channel)
        ids = [(await create_table(stub, humans=1, bots=1)).table_id for _ in range(6)]
    tables = {tid: server.service.tables.live[tid] for tid in ids}
    lost = ids[2]
    await store.release(lost, owner)  # another replica takes it over
    assert await store.acquire(lost, "replica-x 10.0.0.9:50052", 60_000) is None
    store.rounds.clear()
    async with asyncio.timeout(10):
        while tables[lost].closed is None:
            await asyncio.sleep(0.02)
    closed = tables[lost].closed
    assert closed is not None and closed.code == "unavailable"
    async with asyncio.timeout(10):  # one call renews every idle table
        while not any(set(ids) - {lost} <= set(r) for r in store.rounds):
            await asyncio.sleep(0.02)
    for tid in ids:
        if tid != lost:
            assert tables[tid].closed is None and server.service.tables.live[tid] is tables[tid]
            assert await store.holder(tid) == owner
    assert await store.holder(lost) == "replica-x 10.0.0.9:50052"
