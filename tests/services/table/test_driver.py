"""What a table does by itself: covers a human whose clock ran out, deals, abandons, plays bots."""

from __future__ import annotations

import asyncio
import json
import logging
from contextlib import AsyncExitStack
from typing import TypeAlias

import pytest
from feeds import Reading, reading

from rackcore import verify
from rackcore.bots import choose
from services._gen.rackem.v1 import game_pb2, table_pb2, table_pb2_grpc
from services.common.channels import open_channel
from services.common.errors import ServiceError
from services.convert import move_to_pb
from services.gateway.table_client import Link
from services.table.clocks import now_ms
from table.decoded import message_of, view_of
from table.table_players import SeatPlayer, ServerFactory, create_table, linked

Stub: TypeAlias = "table_pb2_grpc.TableAsyncStub"


def _views(link: Link, table_id: str, token: str) -> Reading:
    return reading(link.subscribe, table_pb2.SeatRequest(table_id=table_id, token=token))


async def _read(stream: Reading) -> game_pb2.TableView:
    view = await anext(stream, None)
    assert view is not None, "the subscription ended"
    return view


async def _at(stream: Reading, version: int, seen: list[game_pb2.TableView]) -> game_pb2.TableView:
    """The seat's view at ``version`` (read on from ``seen``'s last, kept in ``seen``)."""
    while not seen or seen[-1].version < version:
        seen.append(await _read(stream))
    assert seen[-1].version == version
    return seen[-1]


async def test_a_seat_whose_clock_runs_out_is_covered_until_its_human_acts(
    start_table_server: ServerFactory,
) -> None:
    server = await start_table_server(decision_ms=150, bot_delay_ms=1_000)
    async with open_channel(server.addr) as channel, AsyncExitStack() as stack:
        stub = table_pb2_grpc.TableStub(channel)
        link = await stack.enter_async_context(linked(stub))
        created = await create_table(stub, humans=1, bots=1)
        tid, token = created.table_id, created.tokens[0]
        stream = _views(link, tid, token)
        seen: list[game_pb2.TableView] = []
        reply = None
        async with asyncio.timeout(30):
            # The human does nothing until its seat is covered on its turn to draw, then
            # draws itself (before the cover, which waits a second while a human watches).
            while reply is None:
                view = await _read(stream)
                seen.append(view)
                covered_turn = (
                    message_of(view)["seats"][0]["kind"] == "cover"
                    and view.status == "playing"
                    and view_of(view).turn == 0
                    and view_of(view).phase == "draw"
                )
                if not covered_turn:
                    continue
                move = choose(view_of(view), "medium")
                request = table_pb2.SubmitMoveRequest(
                    table_id=tid,
                    token=token,
                    move=move_to_pb(move),
                    move_id=f"back-{view.version}",
                    expected_version=view.version,
                )
                try:
                    version = await link.submit(request, 5)
                except ServiceError as exc:
                    assert exc.code == "stale_version"  # the cover was quicker
                else:
                    reply = await _at(stream, version, seen)
            # Then it stops again: its resolve clock runs out and the cover plays for it.
            while not (
                (message_of(seen[-1])["last_move"] or {}).get("by") == "cover"
                and (message_of(seen[-1])["last_move"] or {}).get("seat") == 0
            ):
                seen.append(await _read(stream))
        stream.close()
    assert message_of(reply)["seats"][0]["kind"] == "human"
    assert (message_of(reply)["last_move"] or {}).get("by") == "human" and (
        message_of(reply)["last_move"] or {}
    ).get("seat") == 0
    assert (
        message_of(reply)["deadline_ms"] > 0
    )  # the human's clock runs again for the next decision
    human_turns = [
        v for v in seen if view_of(v).turn == 0 and message_of(v)["seats"][0]["kind"] == "human"
    ]
    assert human_turns and all(
        message_of(v)["deadline_ms"] > 0 for v in human_turns if v.status == "playing"
    )
    assert message_of(seen[-1])["seats"][0]["kind"] == "cover"


async def test_a_covered_seat_takes_itself_back_with_continue_during_play(
    start_table_server: ServerFactory,
) -> None:
    server = await start_table_server(decision_ms=150, bot_delay_ms=400)
    async with open_channel(server.addr) as channel, AsyncExitStack() as stack:
        stub = table_pb2_grpc.TableStub(channel)
        link = await stack.enter_async_context(linked(stub))
        created = await create_table(stub, humans=1, bots=1)
        tid, token = created.table_id, created.tokens[0]
        stream = _views(link, tid, token)
        async with asyncio.timeout(30):
            view = await _read(stream)
            while not (message_of(view)["seats"][0]["kind"] == "cover" and view_of(view).turn == 0):
                view = await _read(stream)
            # One tap: the seat is the human's again, with a fresh clock on its turn.
            await link.continue_round(table_pb2.SeatRequest(table_id=tid, token=token), 5)
            while message_of(view)["seats"][0]["kind"] != "human":
                view = await _read(stream)
        stream.close()
    assert view.status == "playing"
    if view_of(view).turn == 0:  # (the cover's move may have landed first)
        assert message_of(view)["deadline_ms"] > 0 and message_of(view)["remaining_ms"] > 0
    table = server.service.tables.live[tid]
    assert table.kind(0) == "human" and not table.state.covered[0]


async def test_a_move_that_resets_the_clock_lets_the_driver_sleep_on_to_the_new_deadline(
    start_table_server: ServerFactory,
) -> None:
    server = await start_table_server(decision_ms=800, bot_delay_ms=50)
    async with open_channel(server.addr) as channel, AsyncExitStack() as stack:
        stub = table_pb2_grpc.TableStub(channel)
        link = await stack.enter_async_context(linked(stub))
        created = await create_table(stub, humans=2, bots=0)
        tid = created.table_id
        streams = [_views(link, tid, token) for token in created.tokens]
        table = server.service.tables.live[tid]
        async with asyncio.timeout(20):
            view = await _read(streams[0])
            while not (
                message_of(view)["seats"][0]["connected"]
                and message_of(view)["seats"][1]["connected"]
            ):
                view = await _read(streams[0])
            while table.planned_at is None:  # the driver waits for the mover's clock
                await asyncio.sleep(0.01)
            planned = table.planned_at
            mover = view_of(view).turn
            version = await link.submit(
                table_pb2.SubmitMoveRequest(
                    table_id=tid,
                    token=created.tokens[mover],
                    move=game_pb2.Move(act="draw", source="stock"),
                    move_id="draw-1",
                ),
                5,
            )
            # The driver waits on for the cover it planned: the new clock is later.
            reply = await _at(streams[mover], version, [])
            assert message_of(reply)["deadline_ms"] > planned
            assert table.planned_at == planned and not table.changed.is_set()
            # Nobody moves again: at the planned time it looks, sleeps on, and covers the
            # seat at the new deadline, not before.
            while True:
                view = await _read(streams[0])
                if (message_of(view)["last_move"] or {}).get("by") == "cover":
                    break
        for stream in streams:
            stream.close()
    assert (message_of(view)["last_move"] or {}).get("seat") == mover and view.version == 2
    assert now_ms() >= message_of(reply)["deadline_ms"]


async def test_the_round_over_screen_waits_for_the_connected_human(
    start_table_server: ServerFactory,
) -> None:
    server = await start_table_server(decision_ms=50, continue_ms=600_000)
    async with open_channel(server.addr) as channel:
        stub = table_pb2_grpc.TableStub(channel)
        created = await create_table(stub, humans=1, bots=1, target=100)
        watcher = SeatPlayer(stub, created.table_id, created.tokens[0], 0, plays=False)
        async with asyncio.timeout(20):
            await watcher.run(stop=lambda view: view_of(view).round_no == 2)
    over = [v for v in watcher.views if v.status == "round_over"]
    assert message_of(over[0])["continue_deadline_ms"] > 0 and list(
        message_of(over[0])["continued"]
    ) == [False, False]
    assert any(list(message_of(v)["continued"]) == [True, False] for v in over)
    assert view_of(watcher.views[-1]).round_no == 2 and watcher.views[-1].status == "playing"


async def test_the_next_round_comes_at_the_deadline_without_a_continue(
    start_table_server: ServerFactory,
) -> None:
    server = await start_table_server(decision_ms=50, continue_ms=200)
    async with open_channel(server.addr) as channel:
        stub = table_pb2_grpc.TableStub(channel)
        created = await create_table(stub, humans=1, bots=1, target=100)
        watcher = SeatPlayer(
            stub, created.table_id, created.tokens[0], 0, plays=False, continues=False
        )
        async with asyncio.timeout(20):
            await watcher.run(stop=lambda view: view_of(view).round_no == 2)
    over = [v for v in watcher.views if v.status == "round_over"]
    assert over and all(not any(message_of(v)["continued"]) for v in over)
    assert watcher.views[-1].status == "playing"


async def test_a_table_without_a_connected_human_is_abandoned(
    start_table_server: ServerFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="rackem.table")
    server = await start_table_server(decision_ms=600_000, abandon_ms=200)
    async with open_channel(server.addr) as channel:
        stub = table_pb2_grpc.TableStub(channel)
        created = await create_table(stub, humans=1, bots=1)
        request = table_pb2.SummaryRequest(table_id=created.table_id)
        async with asyncio.timeout(20):
            while (await stub.GetSummary(request)).status != "ended":
                await asyncio.sleep(0.05)
        async with linked(stub) as link:
            last = [v async for v in _views(link, created.table_id, created.tokens[0])]
        assert len(last) == 1 and message_of(last[0])["ended_reason"] == "abandoned"
        record = json.loads((await stub.GetRecord(request)).log_json)
    assert verify(record) == {**verify(record), "valid": True, "finished": False}
    records = [r for r in caplog.records if r.getMessage() == "match_record"]
    assert [getattr(r, "fields", {}).get("reason") for r in records] == ["abandoned"]


async def test_bots_fall_back_in_process_when_the_bot_service_is_unreachable(
    start_table_server: ServerFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="rackem.table")
    server = await start_table_server(bot_addr="127.0.0.1:1", bot_timeout_ms=500)
    async with open_channel(server.addr) as channel:
        stub = table_pb2_grpc.TableStub(channel)
        created = await create_table(stub, humans=1, bots=2)
        player = SeatPlayer(stub, created.table_id, created.tokens[0], 0)
        async with asyncio.timeout(30):
            await player.run()
        record = await stub.GetRecord(table_pb2.SummaryRequest(table_id=created.table_id))
    assert verify(json.loads(record.log_json))["finished"]
    assert server.service.tables.bots.fallbacks > 0
    assert any(r.getMessage() == "bot_fallback" for r in caplog.records)
