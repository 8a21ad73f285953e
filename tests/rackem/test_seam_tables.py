"""``rackem up``'s seam to its table replica (rackem/seam/tables.py), against a real replica.

What a wire would do still happens in process: every reader gets views of its own; a
call that outlasts its timeout is answered ``unavailable`` while the table finishes it,
and its retry by ``move_id`` gets the one move it made; a replica that stops refuses
what comes after and ends what was open; CreateTable answers as over gRPC. (The link's
semantics shared with gRPC, whole matches included, are in tests/services/table/
test_link.py, run over both.)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from feeds import reading

from rackem.seam.tables import DirectLink, LocalTables
from services._gen.rackem.v1 import game_pb2, table_pb2
from services.common.errors import ServiceError
from services.common.registry import MemoryRegistry
from services.common.running import Running
from services.table.server import create_server
from services.table.settings import TableSettings
from services.table.store.memory import MemoryStore

NO_BOTS = "127.0.0.1:1"  # nothing listens: no test here seats a bot


@pytest.fixture
async def replica() -> AsyncIterator[Running]:
    running = await create_server(
        TableSettings(host="127.0.0.1", port=0, bot_delay_ms=0, stop_grace_ms=0),
        store=MemoryStore(),
        registry=MemoryRegistry(),
        bot_addr=NO_BOTS,
    )
    yield running
    if not running.service.tables.draining:
        await running.stop(0)


@pytest.fixture
def tables(replica: Running) -> LocalTables:
    return LocalTables({replica.addr: replica.service})


async def create(
    tables: LocalTables, replica: Running, **fields: object
) -> table_pb2.CreateTableReply:
    seats = [table_pb2.SeatSpec(name="Ann"), table_pb2.SeatSpec(name="Bob")]
    request = table_pb2.CreateTableRequest(
        rules=game_pb2.Rules(players=2, target=50), seats=seats, **fields
    )
    return await tables.creators()[replica.addr](request)


def seat(created: table_pb2.CreateTableReply, n: int) -> table_pb2.SeatRequest:
    return table_pb2.SeatRequest(table_id=created.table_id, token=created.tokens[n])


async def test_only_replicas_in_this_process_are_linked_here(
    tables: LocalTables, replica: Running
) -> None:
    assert isinstance(tables.link(replica.addr), DirectLink)
    assert tables.link("127.0.0.1:1") is None  # anywhere else: the gateway links over gRPC
    assert set(tables.creators()) == {replica.addr}


async def test_create_table_answers_and_refuses_as_over_grpc(
    tables: LocalTables, replica: Running
) -> None:
    created = await create(tables, replica, code="SEAM42")
    assert created.replica == replica.addr and len(created.tokens) == 2
    assert created.table_id in replica.service.tables.live
    with pytest.raises(ServiceError) as taken:
        await create(tables, replica, table_id=created.table_id)
    assert taken.value.code == "bad_request"


async def test_every_reader_gets_views_of_its_own(tables: LocalTables, replica: Running) -> None:
    """The table makes a spectator's view once for all its watchers: in process each gets
    a copy, so a reader that changes its view changes nobody else's."""
    created = await create(tables, replica, spectators=True)
    link = tables.link(replica.addr)
    assert link is not None
    tampered: list[str] = []
    untouched: list[str] = []

    def tamper(view: game_pb2.TableView) -> None:
        view.status = "tampered"
        tampered.append(view.status)

    def keep(view: game_pb2.TableView) -> None:
        untouched.append(view.status)

    first = link.watch(table_pb2.SummaryRequest(table_id=created.table_id), tamper)
    second = link.watch(table_pb2.SummaryRequest(table_id=created.table_id), keep)
    player = reading(link.subscribe, seat(created, 0))
    async with asyncio.timeout(10):
        await anext(player)
        while len(untouched) < 2:  # the first view, then the seat's connection
            await asyncio.sleep(0.01)
    assert tampered and set(tampered) == {"tampered"}
    assert set(untouched) == {"playing"}
    for sub in (first, second, player):
        sub.close()
    await link.close()


async def test_a_move_past_its_timeout_is_unavailable_and_is_made_once(
    tables: LocalTables, replica: Running
) -> None:
    created = await create(tables, replica)
    link = tables.link(replica.addr)
    assert link is not None
    table = replica.service.tables.live[created.table_id]
    mover = table.match.turn
    draw = table_pb2.SubmitMoveRequest(
        table_id=created.table_id,
        token=created.tokens[mover],
        move=game_pb2.Move(act="draw", source="stock"),
        move_id="held-up",
        expected_version=0,
    )
    async with table.lock:  # the table is busy: the move waits for it
        with pytest.raises(ServiceError) as late:
            await link.submit(draw, 0.05)
        assert late.value.code == "unavailable"
        assert table.version == 0
    async with asyncio.timeout(10):
        while table.version == 0:  # the table finishes the move all the same
            await asyncio.sleep(0.01)
    assert await link.submit(draw, 5) == 1  # the retry by its id: the same move, once
    assert table.version == 1


async def test_a_stopped_replica_ends_what_was_open_and_refuses_what_comes_after(
    tables: LocalTables, replica: Running
) -> None:
    created = await create(tables, replica)
    link = tables.link(replica.addr)
    assert link is not None
    views = reading(link.subscribe, seat(created, 0))
    async with asyncio.timeout(10):
        await anext(views)
        assert link.busy
        await replica.stop(0)
        with pytest.raises(ServiceError) as ended:
            async for _ in views:
                pass
    assert ended.value.code == "shutting_down"
    assert not link.busy
    for call in (link.continue_round(seat(created, 0), 5), link.leave(seat(created, 1), 5)):
        with pytest.raises(ServiceError) as refused:
            await call
        assert refused.value.code == "shutting_down"
    with pytest.raises(ServiceError) as refused:
        await anext(reading(link.subscribe, seat(created, 0)))
    assert refused.value.code == "shutting_down"
