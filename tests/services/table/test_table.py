"""Requests against one table: refusals leave it unchanged, moves count exactly once, streams."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable
from typing import Any, TypeAlias

import grpc
import pytest
from feeds import Reading, reading

from services._gen.rackem.v1 import game_pb2, table_pb2, table_pb2_grpc
from services.common.errors import ServiceError
from services.common.running import Running
from services.gateway.table_client import Link
from table.decoded import message_of, view_of
from table.table_players import SeatPlayer, create_table, error_code, play_to_the_end

Stub: TypeAlias = "table_pb2_grpc.TableAsyncStub"


async def _next(views: Reading) -> game_pb2.TableView | None:
    """The subscription's next view, or None once it ended."""
    async with asyncio.timeout(10):
        return await anext(views, None)


async def _read(views: Reading) -> game_pb2.TableView:
    view = await _next(views)
    assert view is not None, "the subscription ended"
    return view


async def _first_view(link: Link, table_id: str, token: str) -> game_pb2.TableView:
    views = reading(link.subscribe, table_pb2.SeatRequest(table_id=table_id, token=token))
    try:
        return await _read(views)
    finally:
        views.close()


def _frozen(view: game_pb2.TableView) -> dict[str, object]:
    """A view's message without what changes with the clock alone."""
    message = message_of(view)
    message["remaining_ms"] = 0
    return message


async def _submit(
    link: Link,
    table_id: str,
    token: str,
    move: game_pb2.Move | None,
    move_id: str = "m1",
    expected: int | None = None,
) -> int:
    """The move's answer: the table's version after it."""
    request = table_pb2.SubmitMoveRequest(table_id=table_id, token=token, move_id=move_id)
    if move is not None:
        request.move.CopyFrom(move)
    if expected is not None:
        request.expected_version = expected
    return await link.submit(request, 5)


async def _refused(call: Awaitable[Any]) -> str:
    """The error code ``call`` is refused with."""
    with pytest.raises(ServiceError) as caught:
        await call
    return caught.value.code


async def _rpc_refused(call: Awaitable[Any]) -> str:
    """The error code a gRPC call is refused with."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    return error_code(caught.value)


DRAW = game_pb2.Move(act="draw", source="stock")


def _near(token: str) -> str:
    """A token one character off ``token`` (which the table has already matched)."""
    return token[:-1] + ("0" if token[-1] != "0" else "1")


async def test_refused_moves_get_their_code_and_leave_the_table_unchanged(
    stub: Stub, link: Link
) -> None:
    created = await create_table(stub, humans=2, bots=0)
    tid, tokens = created.table_id, list(created.tokens)
    before = await _first_view(link, tid, tokens[0])
    mover = view_of(before).turn
    waiter = 1 - mover
    summary_before = await stub.GetSummary(table_pb2.SummaryRequest(table_id=tid))
    cases = [
        (tokens[waiter], DRAW, "m1", "not_your_turn"),
        (
            tokens[mover],
            game_pb2.Move(act="place", slot=3),
            "m2",
            "illegal_move",
        ),
        (tokens[mover], game_pb2.Move(act="jump"), "m3", "malformed_move"),
        (
            tokens[mover],
            game_pb2.Move(act="place", slot=12),
            "m4",
            "malformed_move",
        ),
        (tokens[mover], game_pb2.Move(act="draw"), "m5", "malformed_move"),
        (
            tokens[mover],
            game_pb2.Move(act="draw", source="deck"),
            "m6",
            "malformed_move",
        ),
        (
            tokens[mover],
            game_pb2.Move(act="draw", source="stock", go_out=False),
            "m7",
            "malformed_move",
        ),
        (tokens[mover], None, "m8", "malformed_move"),
        (tokens[mover], DRAW, "", "bad_request"),
        (tokens[mover], DRAW, "x" * 65, "bad_request"),
        ("0" * 32, DRAW, "m9", "bad_token"),
        (_near(tokens[mover]), DRAW, "m11", "bad_token"),
        ("", DRAW, "m10", "bad_token"),
    ]
    for token, move, move_id, expected in cases:
        assert await _refused(_submit(link, tid, token, move, move_id)) == expected, move_id
    after = await _first_view(link, tid, tokens[0])
    assert _frozen(after) == _frozen(before)
    summary_after = await stub.GetSummary(table_pb2.SummaryRequest(table_id=tid))
    assert summary_after == summary_before and summary_after.version == 0
    # A refused id is not spent: the same id carries the first accepted move.
    accepted = await _submit(link, tid, tokens[mover], DRAW, "m2")
    assert accepted == 1


async def test_a_repeated_move_id_returns_the_earlier_reply_and_moves_once(
    stub: Stub, link: Link
) -> None:
    created = await create_table(stub, humans=2, bots=0)
    tid, tokens = created.table_id, list(created.tokens)
    mover = view_of(await _first_view(link, tid, tokens[0])).turn
    first = await _submit(link, tid, tokens[mover], DRAW, "same-id", expected=0)
    again = await _submit(link, tid, tokens[mover], DRAW, "same-id", expected=0)
    other = await _submit(link, tid, tokens[mover], game_pb2.Move(act="throw"), "same-id")
    assert first == again == other == 1
    # An older id is still answered once: its version.
    later = await _submit(link, tid, tokens[mover], game_pb2.Move(act="throw"), "later-id")
    older = await _submit(link, tid, tokens[mover], DRAW, "same-id")
    assert (older, later) == (1, 2)
    # Move ids belong to a seat: the other seat's "same-id" is a move of its own.
    summary = await stub.GetSummary(table_pb2.SummaryRequest(table_id=tid))
    assert summary.version == 2
    assert await _submit(link, tid, tokens[1 - mover], DRAW, "same-id") == 3


async def test_a_stale_expected_version_is_refused(stub: Stub, link: Link) -> None:
    created = await create_table(stub, humans=2, bots=0)
    tid, tokens = created.table_id, list(created.tokens)
    mover = view_of(await _first_view(link, tid, tokens[0])).turn
    await _submit(link, tid, tokens[mover], DRAW, "a", expected=0)
    for stale in (0, 7):
        name = await _refused(
            _submit(link, tid, tokens[mover], game_pb2.Move(act="throw"), f"b{stale}", stale)
        )
        assert name == "stale_version"
    assert (await _submit(link, tid, tokens[mover], game_pb2.Move(act="throw"), "c", 1)) == 2


async def test_a_token_of_another_table_is_refused(stub: Stub, link: Link) -> None:
    one = await create_table(stub, humans=1, bots=1)
    two = await create_table(stub, humans=1, bots=1)
    for call in (
        _submit(link, one.table_id, two.tokens[0], DRAW),
        link.continue_round(table_pb2.SeatRequest(table_id=one.table_id, token=two.tokens[0]), 5),
        link.leave(table_pb2.SeatRequest(table_id=one.table_id, token=two.tokens[0]), 5),
        _first_view(link, one.table_id, two.tokens[0]),
    ):
        assert await _refused(call) == "bad_token"


async def test_a_move_after_the_end_is_match_over(stub: Stub, link: Link) -> None:
    created = await create_table(stub, humans=1, bots=1)
    await play_to_the_end([SeatPlayer(stub, created.table_id, created.tokens[0], 0)])
    refused = await _refused(_submit(link, created.table_id, created.tokens[0], DRAW, "late"))
    assert refused == "match_over"
    last = await _first_view(link, created.table_id, created.tokens[0])
    assert last.status == "finished" and view_of(last).seed


async def test_the_newest_subscription_of_a_seat_ends_the_older_one(stub: Stub, link: Link) -> None:
    created = await create_table(stub, humans=2, bots=0)
    request = table_pb2.SeatRequest(table_id=created.table_id, token=created.tokens[0])
    older = reading(link.subscribe, request)
    assert message_of(await _read(older))["seats"][0]["connected"]
    newer = reading(link.subscribe, request)
    first = await _read(newer)
    assert message_of(first)["seats"][0]["connected"]
    while (view := await _next(older)) is not None:  # it ends cleanly
        assert view.version == 0
    newer.close()


async def test_a_stream_shows_who_is_connected(stub: Stub, link: Link) -> None:
    created = await create_table(stub, humans=2, bots=0)
    tid = created.table_id
    watcher = reading(link.subscribe, table_pb2.SeatRequest(table_id=tid, token=created.tokens[0]))
    assert [s["connected"] for s in message_of(await _read(watcher))["seats"]] == [True, False]
    other = reading(link.subscribe, table_pb2.SeatRequest(table_id=tid, token=created.tokens[1]))
    await _read(other)
    assert [s["connected"] for s in message_of(await _read(watcher))["seats"]] == [True, True]
    other.close()
    assert [s["connected"] for s in message_of(await _read(watcher))["seats"]] == [True, False]
    watcher.close()


async def test_a_subscriber_that_falls_behind_is_dropped_not_waited_for(
    table_server: Running, stub: Stub, link: Link
) -> None:
    created = await create_table(stub, humans=2, bots=0)
    tid, tokens = created.table_id, list(created.tokens)
    table = table_server.service.tables.live[tid]
    slow = await table.subscribe(0, lambda: None)  # never read
    mover = table.match.turn
    moves = [DRAW, game_pb2.Move(act="throw")]
    for i in range(table_server.service.tables.settings.stream_queue + 2):
        seat = table.match.turn
        await _submit(link, tid, tokens[seat], moves[i % 2], f"k{i}")
    assert slow.ended and slow.error is not None and slow.error.code == "unavailable"
    assert table.version == table_server.service.tables.settings.stream_queue + 2
    assert not table.connected()[0] and mover in (0, 1)


async def test_leaving_gives_the_seat_to_a_bot_for_good(stub: Stub, link: Link) -> None:
    created = await create_table(stub, humans=2, bots=0)
    tid, tokens = created.table_id, list(created.tokens)
    watcher = SeatPlayer(stub, tid, tokens[1], 1)
    playing = asyncio.create_task(play_to_the_end([watcher]))
    await link.leave(table_pb2.SeatRequest(table_id=tid, token=tokens[0]), 5)
    await link.leave(table_pb2.SeatRequest(table_id=tid, token=tokens[0]), 5)  # again: no-op
    await playing
    last = watcher.views[-1]
    assert last.status == "finished"
    assert (
        message_of(last)["seats"][0]["kind"],
        message_of(last)["seats"][0]["left"],
        message_of(last)["seats"][0]["level"],
    ) == ("bot", True, "medium")
    refused = await _refused(_submit(link, tid, tokens[0], DRAW, "back"))
    assert refused in ("bad_token", "match_over")
    record = await stub.GetRecord(table_pb2.SummaryRequest(table_id=tid))
    assert '"by":"bot"' in record.log_json


async def test_create_table_refuses_bad_requests(stub: Stub, link: Link) -> None:
    seats = [table_pb2.SeatSpec(name="Ann"), table_pb2.SeatSpec(bot=True)]
    cases = [
        (table_pb2.CreateTableRequest(rules=game_pb2.Rules(players=3), seats=seats), "bad_request"),
        (table_pb2.CreateTableRequest(rules=game_pb2.Rules(target=1), seats=seats), "bad_rules"),
        (table_pb2.CreateTableRequest(seats=[table_pb2.SeatSpec(name="")] * 2), "bad_name"),
        (table_pb2.CreateTableRequest(seats=[table_pb2.SeatSpec(name="a\x07")] * 2), "bad_name"),
        (table_pb2.CreateTableRequest(seats=[table_pb2.SeatSpec(name="x" * 21)] * 2), "bad_name"),
        (
            table_pb2.CreateTableRequest(
                seats=[table_pb2.SeatSpec(name="A", token_hash="abc"), seats[1]]
            ),
            "bad_request",
        ),
        (
            table_pb2.CreateTableRequest(
                seats=[seats[0], table_pb2.SeatSpec(bot=True, level="godlike")]
            ),
            "bad_request",
        ),
        (table_pb2.CreateTableRequest(table_id="bad id!", seats=seats), "bad_request"),
    ]
    for request, expected in cases:
        assert await _rpc_refused(stub.CreateTable(request)) == expected
    taken = await stub.CreateTable(table_pb2.CreateTableRequest(table_id="t-fixed", seats=seats))
    assert taken.table_id == "t-fixed"
    again = table_pb2.CreateTableRequest(table_id="t-fixed", seats=seats)
    assert await _rpc_refused(stub.CreateTable(again)) == "bad_request"


async def test_a_seat_created_with_a_token_hash_is_held_by_that_token(
    stub: Stub, link: Link
) -> None:
    token = "ab" * 16
    digest = hashlib.sha256(token.encode()).hexdigest()
    seats = [
        table_pb2.SeatSpec(name="Ann", token_hash=digest.upper()),
        table_pb2.SeatSpec(bot=True),
    ]
    created = await stub.CreateTable(table_pb2.CreateTableRequest(seats=seats))
    assert list(created.tokens) == ["", ""]
    view = await _first_view(link, created.table_id, token)
    assert view_of(view).seat == 0 and message_of(view)["seats"][0]["name"] == "Ann"


async def test_a_repeated_create_answers_the_same_table_again(stub: Stub, link: Link) -> None:
    digest = hashlib.sha256(b"cd" * 16).hexdigest()
    seats = [table_pb2.SeatSpec(name="Ann", token_hash=digest), table_pb2.SeatSpec(bot=True)]
    request = table_pb2.CreateTableRequest(table_id="t-again", code="K7MX2Q", seats=seats)
    first = await stub.CreateTable(request)
    again = await stub.CreateTable(request)
    assert again == first
    other = table_pb2.CreateTableRequest(table_id="t-again", code="OTHER1", seats=seats)
    assert await _rpc_refused(stub.CreateTable(other)) == "bad_request"
