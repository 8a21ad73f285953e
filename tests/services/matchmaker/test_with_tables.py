"""The matchmaker with the real table service (services.table, memory table store, bots
chosen in-process): the tables it places accept the seat tokens it handed out."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import replace

import grpc
import pytest
from feeds import reading

from services._gen.rackem.v1 import game_pb2, table_pb2, table_pb2_grpc
from services._gen.rackem.v1 import matchmaker_pb2 as pb
from services.common.channels import open_channel
from services.common.errors import ServiceError, from_rpc_error
from services.common.registry import MemoryRegistry, Registry, Replica
from services.common.running import Running as TableRunning
from services.gateway.table_client import dial
from services.matchmaker.placement import Placer
from services.table.server import create_server as create_table_server
from services.table.settings import TableSettings
from services.table.store.memory import MemoryStore as TableMemoryStore
from tests.services.table.decoded import message_of, view_of

from .clients import LIMIT_S, until_status
from .conftest import FAST, SLOW_FILL, Cluster

TABLE = TableSettings(host="127.0.0.1", port=0, bot_addr="", bot_delay_ms=10, heartbeat_ms=100)


@pytest.fixture
async def tables(registry: Registry) -> AsyncIterator[list[TableRunning]]:
    """Two real table replicas heartbeating into the matchmakers' registry."""
    started = [
        await create_table_server(TABLE, store=TableMemoryStore(), registry=registry)
        for _ in range(2)
    ]
    yield started
    for running in started:
        await running.stop(0)


async def first_view(replica: str, table_id: str, token: str) -> game_pb2.TableView:
    """The seat's first view, over the gateway's link client to ``replica``."""
    async with open_channel(replica) as channel:
        link = dial(table_pb2_grpc.TableStub(channel))
        try:
            views = reading(link.subscribe, table_pb2.SeatRequest(table_id=table_id, token=token))
            async with asyncio.timeout(LIMIT_S):
                view = await anext(views)
            views.close()
        finally:
            await link.close()
    return view


async def test_a_quick_match_table_accepts_the_seat_tokens_it_was_given(
    cluster: Cluster, tables: list[TableRunning]
) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    ann = await stub.QuickMatch(pb.QuickMatchRequest(name="Ann", players=2))
    bob = await stub.QuickMatch(pb.QuickMatchRequest(name="Bob", players=2))
    assert bob.lobby.status == "started"
    assert bob.lobby.replica in {t.addr for t in tables}
    for seated in (ann, bob):
        view = await first_view(bob.lobby.replica, seated.table_id, seated.token)
        assert (view.table_id, message_of(view)["code"], view_of(view).seat) == (
            seated.table_id,
            seated.code,
            seated.seat,
        )
        assert [(s["name"], s["kind"]) for s in message_of(view)["seats"]] == [
            ("Ann", "human"),
            ("Bob", "human"),
        ]
    with pytest.raises(ServiceError) as forged:
        await first_view(bob.lobby.replica, ann.table_id, "0" * 32)
    assert forged.value.code == "bad_token"


async def test_a_timed_out_quick_table_gets_bots_on_the_real_table(
    cluster: Cluster, tables: list[TableRunning]
) -> None:
    _, stub = await cluster.start(replace(FAST, fill_lone_ms=100))
    ann = await stub.QuickMatch(pb.QuickMatchRequest(name="Ann", players=3))
    lobby = await until_status(stub, ann.token, "started")
    view = await first_view(lobby.replica, ann.table_id, ann.token)
    # A seat's level shows for bots (and covers) only.
    assert [(s["kind"], s["level"]) for s in message_of(view)["seats"]] == [("human", "")] + [
        ("bot", "medium")
    ] * 2
    assert [s["name"] for s in message_of(view)["seats"]] == [s.name for s in lobby.seats]


async def test_new_games_against_the_computer_spread_over_the_real_replicas(
    cluster: Cluster, tables: list[TableRunning]
) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    rules = game_pb2.Rules(players=4, target=200)
    games = [
        await stub.CreateTable(
            pb.CreatePrivateRequest(name=f"P{i}", rules=rules, level="hard", start_now=True)
        )
        for i in range(6)
    ]
    assert {g.lobby.replica for g in games} == {t.addr for t in tables}
    view = await first_view(games[0].lobby.replica, games[0].table_id, games[0].token)
    assert [(s["kind"], s["level"]) for s in message_of(view)["seats"]] == [("human", "")] + [
        ("bot", "hard")
    ] * 3
    assert (view_of(view).rules.players, view_of(view).rules.target) == (4, 200)


def table_request(table_id: str) -> table_pb2.CreateTableRequest:
    seats = [table_pb2.SeatSpec(name="Ann"), table_pb2.SeatSpec(bot=True, level="easy")]
    return table_pb2.CreateTableRequest(
        table_id=table_id, code="ROOM42", rules=game_pb2.Rules(players=2), seats=seats
    )


async def test_a_replica_in_this_process_is_called_directly(registry: Registry) -> None:
    replica = await create_table_server(TABLE, store=TableMemoryStore(), registry=registry)
    try:
        called: list[str] = []

        async def direct(request: table_pb2.CreateTableRequest) -> table_pb2.CreateTableReply:
            called.append(request.table_id)  # over gRPC, this would not be called
            return await replica.service.create(request)

        placer = Placer(registry, 2.0, local={replica.addr: direct})
        try:
            reply, addr = await placer.create(table_request("t-local-1"))
        finally:
            await placer.close()
        assert called == ["t-local-1"]
        assert (addr, reply.table_id, reply.replica) == (replica.addr, "t-local-1", replica.addr)
        table = await replica.service.tables.get("t-local-1")
        assert table.seat_for(reply.tokens[0]) == 0
    finally:
        await replica.stop(0)


async def test_a_direct_call_refuses_as_grpc_does_and_the_next_replica_is_tried(
    registry: Registry, tables: list[TableRunning]
) -> None:
    draining, working = tables
    await draining.service.tables.drain()  # refuses new tables: shutting_down
    with pytest.raises(ServiceError) as refused_directly:
        await draining.service.create(table_request("t-local-2"))
    async with open_channel(draining.addr) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as over_grpc:
            await table_pb2_grpc.TableStub(channel).CreateTable(table_request("t-local-2"))
    expected = from_rpc_error(over_grpc.value)
    assert (refused_directly.value.code, refused_directly.value.message) == (
        expected.code,
        expected.message,
    )
    assert expected.code == "shutting_down"
    # The registry has not heard of the drain yet: the placer tries it, then the next.
    local = {t.addr: t.service.create for t in tables}
    placer = Placer(registry, 2.0, fallback_addr=working.addr, local=local)
    try:
        _, addr = await placer.create(table_request("t-local-3"))
    finally:
        await placer.close()
    assert addr == working.addr
    assert (await working.service.tables.get("t-local-3")).table_id == "t-local-3"


async def test_a_direct_call_past_its_deadline_is_unavailable(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="rackem")
    registry = MemoryRegistry()
    await registry.heartbeat(Replica("r1", "in-process:1", 0), 60_000)
    never = asyncio.Event()

    async def hung(request: table_pb2.CreateTableRequest) -> table_pb2.CreateTableReply:
        await never.wait()  # a replica that never answers
        raise AssertionError("unreachable")

    placer = Placer(registry, 0.2, local={"in-process:1": hung})
    try:
        with pytest.raises(ServiceError) as failed:
            await placer.create(table_request("t-local-4"))
    finally:
        await placer.close()
    assert failed.value.code == "no_replica"
    failures = [r for r in caplog.records if r.getMessage() == "create_failed"]
    assert [r.fields["code"] for r in failures] == ["unavailable"]  # type: ignore[attr-defined]
