"""Rematches over real gRPC on both stores, placing on a recording table replica."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import TYPE_CHECKING

import grpc

from services._gen.rackem.v1 import game_pb2
from services._gen.rackem.v1 import matchmaker_pb2 as pb

from .clients import LIMIT_S, refused, sha, until_status
from .conftest import SLOW_FILL, Cluster
from .tableserver import RecordingTable

if TYPE_CHECKING:
    from services._gen.rackem.v1.matchmaker_pb2_grpc import MatchmakerAsyncStub as Stub

RULES = game_pb2.Rules(players=3, target=200, bonus=True)


async def _played(stub: Stub) -> tuple[pb.Seated, pb.Seated]:
    """Ann and Bob at a started three-seat table (a bot in the third seat)."""
    ann = await stub.CreateTable(pb.CreatePrivateRequest(name="Ann", rules=RULES, level="hard"))
    bob = await stub.JoinByCode(pb.JoinRequest(code=ann.code, name="Bob"))
    await stub.Start(pb.TokenRequest(token=ann.token))
    return ann, bob


async def test_a_rematch_seats_everyone_again_at_a_new_table_that_starts_once_all_answered(
    cluster: Cluster, table: RecordingTable
) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    ann, bob = await _played(stub)
    [first] = table.calls
    offers = stub.WatchRematch(pb.TokenRequest(token=bob.token))

    again = await stub.Rematch(pb.TokenRequest(token=ann.token))
    assert again.table_id != ann.table_id and again.code != ann.code
    assert again.token != ann.token and again.seat == ann.seat
    lobby = again.lobby
    assert lobby.status == "waiting" and lobby.creator_seat == -1 and not lobby.public
    assert [(s.name, s.taken, s.bot) for s in lobby.seats] == [
        ("Ann", True, False),
        ("Bob", False, False),  # kept for Bob until he answers
        (first.seats[2].name, True, True),
    ]
    assert lobby.fill_deadline_ms > 0
    offer = await offers.read()
    assert isinstance(offer, pb.Lobby) and offer.table_id == again.table_id
    assert [s.taken for s in offer.seats] == [True, False, True]
    assert await refused(stub.JoinByCode(pb.JoinRequest(code=again.code, name="Eve"))) == (
        "table_full"
    )

    bobs = await stub.Rematch(pb.TokenRequest(token=bob.token))
    assert (bobs.table_id, bobs.seat) == (again.table_id, bob.seat)
    assert bobs.lobby.status == "started"
    async with asyncio.timeout(LIMIT_S):
        while True:
            update = await offers.read()
            assert isinstance(update, pb.Lobby)
            if update.status == "started":
                break
        assert await offers.read() is grpc.aio.EOF  # type: ignore[attr-defined]
    second = table.calls[-1]
    assert second.table_id == again.table_id and second.code == again.code
    assert second.rules == first.rules
    assert [(s.name, s.bot, s.level) for s in second.seats] == [
        (s.name, s.bot, s.level) for s in first.seats
    ]
    assert [s.token_hash for s in second.seats] == [sha(again.token), sha(bobs.token), ""]
    assert await refused(stub.Rematch(pb.TokenRequest(token=bob.token))) == "already_started"


async def test_a_rematch_nobody_else_answers_starts_after_its_wait_with_a_bot(
    cluster: Cluster, table: RecordingTable
) -> None:
    _, stub = await cluster.start(replace(SLOW_FILL, rematch_ms=300))
    ann, _ = await _played(stub)
    again = await stub.Rematch(pb.TokenRequest(token=ann.token))
    # Asking twice (a second connection of Ann's) keeps one seat, with the newer token.
    newer = await stub.Rematch(pb.TokenRequest(token=ann.token))
    assert (newer.table_id, newer.seat) == (again.table_id, again.seat)
    assert await refused(stub.Locate(pb.TokenRequest(token=again.token))) == "bad_token"
    started = await until_status(stub, newer.token, "started")
    assert started.table_id == again.table_id
    call = table.calls[-1]
    assert [s.bot for s in call.seats] == [False, True, True]
    assert call.seats[1].name != "Bob" and call.seats[0].token_hash == sha(newer.token)


async def test_a_rematch_follows_only_a_played_match_and_a_lone_player_needs_no_wait(
    cluster: Cluster, table: RecordingTable
) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    waiting = await stub.CreateTable(pb.CreatePrivateRequest(name="Ann", rules=RULES))
    assert await refused(stub.Rematch(pb.TokenRequest(token=waiting.token))) == "no_rematch"
    assert await refused(stub.Rematch(pb.TokenRequest(token="0" * 32))) == "bad_token"
    alone = await stub.CreateTable(
        pb.CreatePrivateRequest(name="Cy", rules=RULES, start_now=True, spectators="public")
    )
    offers = [o async for o in stub.WatchRematch(pb.TokenRequest(token=alone.token))]
    assert offers == []  # nobody else to tell
    again = await stub.Rematch(pb.TokenRequest(token=alone.token))
    assert again.lobby.status == "started" and again.lobby.spectators == "public"
    assert table.calls[-1].spectators
