"""Spectators at a table replica over real gRPC: public views only, a cap, never a seat."""

from __future__ import annotations

import asyncio
import contextlib
import json

import pytest
from feeds import reading

from rackcore import SPECTATOR
from services._gen.rackem.v1 import game_pb2, table_pb2, table_pb2_grpc
from services.common.channels import open_channel
from services.common.errors import ServiceError
from services.common.running import Running
from table.decoded import message_of, view_of
from table.table_players import (
    SeatPlayer,
    ServerFactory,
    assert_views_private,
    linked,
    play_to_the_end,
    seat_specs,
)


async def open_table(
    stub: table_pb2_grpc.TableAsyncStub, humans: int, bots: int, spectators: bool, target: int = 100
) -> table_pb2.CreateTableReply:
    request = table_pb2.CreateTableRequest(
        code="WATCH1",
        rules=game_pb2.Rules(players=humans + bots, target=target),
        seats=seat_specs(humans, bots),
        spectators=spectators,
    )
    reply: table_pb2.CreateTableReply = await stub.CreateTable(request)
    return reply


async def watch_all(
    stub: table_pb2_grpc.TableAsyncStub, table_id: str, into: list[game_pb2.TableView]
) -> None:
    async with linked(stub) as link:
        async for view in reading(link.watch, table_pb2.SummaryRequest(table_id=table_id)):
            into.append(view)


@pytest.mark.parametrize(("humans", "bots"), [(2, 0), (1, 2), (2, 2)])
async def test_a_spectator_of_a_whole_match_gets_exactly_the_public_view_every_time(
    stub: table_pb2_grpc.TableAsyncStub, humans: int, bots: int
) -> None:
    created = await open_table(stub, humans, bots, spectators=True)
    watched: list[game_pb2.TableView] = []
    watcher = asyncio.create_task(watch_all(stub, created.table_id, watched))
    players = [SeatPlayer(stub, created.table_id, created.tokens[s], s) for s in range(humans)]
    await play_to_the_end(players)
    async with asyncio.timeout(10):
        await watcher  # the stream ends after the final view
    record = await stub.GetRecord(table_pb2.SummaryRequest(table_id=created.table_id))
    log = json.loads(record.log_json)
    assert watched[-1].status == "finished" and view_of(watched[-1]).seed == log["seed"]
    assert_views_private(log, SPECTATOR, watched)
    assert all(not view_of(v).rack and view_of(v).seat == SPECTATOR for v in watched)
    for player in players:  # the seats were told of the watcher, and only its count
        assert any(message_of(v)["watchers"] == 1 for v in player.views)
        assert_views_private(log, player.seat, player.views)


async def test_a_table_not_open_to_spectators_refuses_them(
    stub: table_pb2_grpc.TableAsyncStub,
) -> None:
    created = await open_table(stub, 1, 1, spectators=False)
    with pytest.raises(ServiceError) as refused:
        await watch_all(stub, created.table_id, [])
    assert refused.value.code == "no_spectators"


async def test_watchers_past_the_cap_are_refused_and_count_as_no_human(
    start_table_server: ServerFactory,
) -> None:
    server: Running = await start_table_server(spectators_per_table=2, abandon_ms=1_000)
    async with open_channel(server.addr) as channel:
        stub = table_pb2_grpc.TableStub(channel)
        created = await open_table(stub, 1, 1, spectators=True, target=1000)
        views: list[list[game_pb2.TableView]] = [[], []]
        watchers = [asyncio.create_task(watch_all(stub, created.table_id, into)) for into in views]
        async with asyncio.timeout(10):
            while not all(views):
                await asyncio.sleep(0.01)
        with pytest.raises(ServiceError) as refused:
            await watch_all(stub, created.table_id, [])
        assert refused.value.code == "spectators_full"
        summary = await stub.GetSummary(table_pb2.SummaryRequest(table_id=created.table_id))
        assert [s.connected for s in summary.seats] == [False, False]
        async with asyncio.timeout(20):  # no human ever connected: abandoned, watchers or not
            await asyncio.gather(*watchers)
    for watched in views:
        assert (watched[-1].status, message_of(watched[-1])["ended_reason"]) == (
            "ended",
            "abandoned",
        )
        assert max(message_of(v)["watchers"] for v in watched) == 2


async def test_a_watcher_changes_nothing_the_tables_clocks_look_at(
    table_server: Running, stub: table_pb2_grpc.TableAsyncStub
) -> None:
    created = await open_table(stub, 3, 0, spectators=True, target=1000)
    table = table_server.service.tables.live[created.table_id]
    before = table.facts()
    watched: list[game_pb2.TableView] = []
    watcher = asyncio.create_task(watch_all(stub, created.table_id, watched))
    async with asyncio.timeout(10):
        while not watched:
            await asyncio.sleep(0.01)
    # Covers, grace, bots' pace and abandonment see only the seats: the same facts.
    assert table.facts() == before and table.watchers == 1
    assert table.connected() == (False, False, False)
    watcher.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await watcher
    async with asyncio.timeout(10):
        while table.watchers:
            await asyncio.sleep(0.01)
