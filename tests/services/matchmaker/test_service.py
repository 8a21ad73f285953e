"""The matchmaker's flows over real gRPC, on both stores, placing on a recording table
replica (see tableserver.py)."""

from __future__ import annotations

import re

import grpc

from rackcore import Rules
from services._gen.rackem.v1 import game_pb2
from services._gen.rackem.v1 import matchmaker_pb2 as pb
from services.convert import rules_from_pb

from .clients import refused, sha
from .conftest import SLOW_FILL, Cluster
from .tableserver import RecordingTable


async def test_quick_match_seats_two_and_starts_the_full_table(
    cluster: Cluster, table: RecordingTable
) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    ann = await stub.QuickMatch(pb.QuickMatchRequest(name=" Ann ", players=2))
    assert re.fullmatch(r"[0-9a-f]{32}", ann.token) and re.fullmatch(r"t[0-9a-f]{16}", ann.table_id)
    assert re.fullmatch(r"[A-HJ-NP-Z2-9]{6}", ann.code) and ann.seat == 0
    lobby = ann.lobby
    assert (lobby.status, lobby.public, lobby.creator_seat) == ("waiting", True, -1)
    assert lobby.fill_deadline_ms > 0 and lobby.level == "medium"
    assert [(s.name, s.taken) for s in lobby.seats] == [("Ann", True), ("", False)]
    bob = await stub.QuickMatch(pb.QuickMatchRequest(name="Bob", players=2))
    assert (bob.table_id, bob.seat, bob.code) == (ann.table_id, 1, ann.code)
    assert bob.lobby.status == "started" and bob.lobby.replica == table.addr
    assert bob.lobby.fill_deadline_ms == 0
    [call] = table.calls
    assert (call.table_id, call.code) == (ann.table_id, ann.code)
    assert rules_from_pb(call.rules) == Rules(players=2)
    assert [(s.name, s.bot, s.token_hash) for s in call.seats] == [
        ("Ann", False, sha(ann.token)),
        ("Bob", False, sha(bob.token)),
    ]


async def test_quick_match_keeps_player_counts_apart(
    cluster: Cluster, table: RecordingTable
) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    three = await stub.QuickMatch(pb.QuickMatchRequest(name="Ann", players=3))
    four = await stub.QuickMatch(pb.QuickMatchRequest(name="Bob", players=4))
    assert three.table_id != four.table_id
    assert len(three.lobby.seats) == 3 and len(four.lobby.seats) == 4


async def test_quick_match_refuses_bad_names_and_player_counts(cluster: Cluster) -> None:
    _, stub = await cluster.start()
    for name in ("", "   ", "x" * 21, "Ann\x07", "Ann\u202e"):
        request = pb.QuickMatchRequest(name=name, players=2)
        assert await refused(stub.QuickMatch(request)) == "bad_name"
    for players in (0, 1, 5, -2):
        request = pb.QuickMatchRequest(name="Ann", players=players)
        assert await refused(stub.QuickMatch(request)) == "bad_request"


async def test_a_private_table_is_joined_by_code_and_started_by_its_creator(
    cluster: Cluster, table: RecordingTable
) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    rules = game_pb2.Rules(players=3, target=300, bonus=True)
    ann = await stub.CreateTable(pb.CreatePrivateRequest(name="Ann", rules=rules, level="easy"))
    lobby = ann.lobby
    assert (ann.seat, lobby.status, lobby.public, lobby.creator_seat) == (0, "waiting", False, 0)
    assert lobby.fill_deadline_ms == 0 and lobby.level == "easy"
    assert rules_from_pb(lobby.rules) == Rules(players=3, target=300, bonus=True)
    assert lobby.rules.HasField("run_to_go_out")  # the full rules, defaults resolved
    assert await stub.GetLobby(pb.LobbyRequest(code=ann.code.lower())) == lobby
    bob = await stub.JoinByCode(pb.JoinRequest(code=f" {ann.code.lower()} ", name="Bob"))
    assert (bob.table_id, bob.seat, bob.lobby.status) == (ann.table_id, 1, "waiting")
    assert await refused(stub.Start(pb.TokenRequest(token=bob.token))) == "not_creator"
    started = await stub.Start(pb.TokenRequest(token=ann.token))
    assert started.status == "started" and started.replica == table.addr
    assert [(s.name, s.bot) for s in started.seats][:2] == [("Ann", False), ("Bob", False)]
    assert started.seats[2].bot and started.seats[2].name.startswith("Bot ")
    cy = pb.JoinRequest(code=ann.code, name="Cy")
    assert await refused(stub.JoinByCode(cy)) == "already_started"
    assert await refused(stub.Start(pb.TokenRequest(token=ann.token))) == "already_started"
    [call] = table.calls
    assert [s.level for s in call.seats] == ["easy"] * 3
    assert [(s.bot, bool(s.token_hash)) for s in call.seats] == [
        (False, True),
        (False, True),
        (True, False),
    ]
    assert rules_from_pb(call.rules) == Rules(players=3, target=300, bonus=True)


async def test_a_full_private_table_starts_by_itself(
    cluster: Cluster, table: RecordingTable
) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    ann = await stub.CreateTable(pb.CreatePrivateRequest(name="Ann"))
    assert len(ann.lobby.seats) == 2  # rules default to two players
    bob = await stub.JoinByCode(pb.JoinRequest(code=ann.code, name="Bob"))
    assert bob.lobby.status == "started"
    assert [s.name for s in table.calls[0].seats] == ["Ann", "Bob"]


async def test_joining_is_refused_for_unknown_full_and_quick_match_codes(cluster: Cluster) -> None:
    # No table replica at all: a full table cannot start, so it stays full and waiting.
    _, stub = await cluster.start(SLOW_FILL)
    for code in ("", "??????", "ZZZZZZ", "ABCDEFG"):
        assert await refused(stub.JoinByCode(pb.JoinRequest(code=code, name="Ann"))) == "no_code"
    ann = await stub.CreateTable(pb.CreatePrivateRequest(name="Ann"))
    bob = await stub.JoinByCode(pb.JoinRequest(code=ann.code, name="Bob"))
    assert bob.lobby.status == "waiting"
    cy = pb.JoinRequest(code=ann.code, name="Cy")
    assert await refused(stub.JoinByCode(cy)) == "table_full"
    assert await refused(stub.JoinByCode(pb.JoinRequest(code=ann.code, name=""))) == "bad_name"
    quick = await stub.QuickMatch(pb.QuickMatchRequest(name="Di", players=4))
    joiner = pb.JoinRequest(code=quick.code, name="Eve")
    assert await refused(stub.JoinByCode(joiner)) == "no_code"


async def test_a_creator_who_leaves_closes_the_table(cluster: Cluster) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    ann = await stub.CreateTable(
        pb.CreatePrivateRequest(name="Ann", rules=game_pb2.Rules(players=3))
    )
    bob = await stub.JoinByCode(pb.JoinRequest(code=ann.code, name="Bob"))
    closed = await stub.Leave(pb.TokenRequest(token=ann.token))
    assert closed.status == "closed"
    assert await refused(stub.GetLobby(pb.LobbyRequest(code=ann.code))) == "no_code"
    cy = pb.JoinRequest(code=ann.code, name="Cy")
    assert await refused(stub.JoinByCode(cy)) == "no_code"
    assert (await stub.Locate(pb.TokenRequest(token=bob.token))).lobby.status == "closed"
    assert await refused(stub.Locate(pb.TokenRequest(token=ann.token))) == "bad_token"
    assert await refused(stub.Start(pb.TokenRequest(token=ann.token))) == "bad_token"


async def test_a_joiner_who_leaves_frees_the_seat(cluster: Cluster) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    ann = await stub.CreateTable(
        pb.CreatePrivateRequest(name="Ann", rules=game_pb2.Rules(players=3))
    )
    bob = await stub.JoinByCode(pb.JoinRequest(code=ann.code, name="Bob"))
    after = await stub.Leave(pb.TokenRequest(token=bob.token))
    assert after.status == "waiting"
    assert [s.taken for s in after.seats] == [True, False, False]
    assert await refused(stub.Locate(pb.TokenRequest(token=bob.token))) == "bad_token"
    cy = await stub.JoinByCode(pb.JoinRequest(code=ann.code, name="Cy"))
    assert cy.seat == 1


async def test_leaving_after_the_start_is_refused(cluster: Cluster, table: RecordingTable) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    ann = await stub.CreateTable(pb.CreatePrivateRequest(name="Ann"))
    await stub.Start(pb.TokenRequest(token=ann.token))
    assert await refused(stub.Leave(pb.TokenRequest(token=ann.token))) == "already_started"


async def test_a_new_game_against_the_computer_starts_at_once(
    cluster: Cluster, table: RecordingTable
) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    request = pb.CreatePrivateRequest(
        name="Ann", rules=game_pb2.Rules(players=4), level="hard", start_now=True
    )
    ann = await stub.CreateTable(request)
    assert ann.lobby.status == "started" and ann.lobby.replica == table.addr
    [call] = table.calls
    assert [(s.bot, s.level) for s in call.seats] == [(False, "hard")] + [(True, "hard")] * 3
    assert call.seats[0].token_hash == sha(ann.token)
    assert len({s.name for s in call.seats}) == 4


async def test_a_new_game_without_any_table_replica_is_refused(cluster: Cluster) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    request = pb.CreatePrivateRequest(name="Ann", start_now=True)
    assert await refused(stub.CreateTable(request)) == "no_replica"


async def test_bad_rules_and_levels_are_refused(cluster: Cluster) -> None:
    _, stub = await cluster.start()
    for rules in (
        game_pb2.Rules(players=5),
        game_pb2.Rules(players=3, partners=True),
        game_pb2.Rules(target=10),
        game_pb2.Rules(tiebreak="coin"),
    ):
        request = pb.CreatePrivateRequest(name="Ann", rules=rules)
        assert await refused(stub.CreateTable(request)) == "bad_rules"
    request = pb.CreatePrivateRequest(name="Ann", level="godlike")
    assert await refused(stub.CreateTable(request)) == "bad_request"
    assert await refused(stub.CreateTable(pb.CreatePrivateRequest(name="\n"))) == "bad_name"


async def test_locate_follows_a_token_to_its_lobby_and_then_its_table(
    cluster: Cluster, table: RecordingTable
) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    ann = await stub.QuickMatch(pb.QuickMatchRequest(name="Ann", players=2))
    found = await stub.Locate(pb.TokenRequest(token=ann.token))
    assert (found.token, found.seat, found.table_id, found.code) == (
        ann.token,
        0,
        ann.table_id,
        ann.code,
    )
    assert found.lobby.status == "waiting" and found.lobby.replica == ""
    await stub.QuickMatch(pb.QuickMatchRequest(name="Bob", players=2))
    found = await stub.Locate(pb.TokenRequest(token=ann.token.upper()))
    assert found.lobby.status == "started" and found.lobby.replica == table.addr
    for token in ("", "nonsense", "0" * 32, ann.token + "0"):
        assert await refused(stub.Locate(pb.TokenRequest(token=token))) == "bad_token"


async def test_get_lobby_shows_seats_without_tokens(cluster: Cluster) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    ann = await stub.CreateTable(pb.CreatePrivateRequest(name="Ann"))
    lobby = await stub.GetLobby(pb.LobbyRequest(code=ann.code))
    text = lobby.SerializeToString()
    assert ann.token.encode() not in text and sha(ann.token).encode() not in text
    assert await refused(stub.GetLobby(pb.LobbyRequest(code="ZZZZZZ"))) == "no_code"


async def test_watch_lobby_sends_each_change_until_the_start(
    cluster: Cluster, table: RecordingTable
) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    ann = await stub.CreateTable(
        pb.CreatePrivateRequest(name="Ann", rules=game_pb2.Rules(players=3))
    )
    stream = stub.WatchLobby(pb.TokenRequest(token=ann.token))
    first = await stream.read()
    assert isinstance(first, pb.Lobby) and [s.taken for s in first.seats] == [True, False, False]
    bob = await stub.JoinByCode(pb.JoinRequest(code=ann.code, name="Bob"))
    joined = await stream.read()
    assert isinstance(joined, pb.Lobby) and [s.name for s in joined.seats] == ["Ann", "Bob", ""]
    await stub.Leave(pb.TokenRequest(token=bob.token))
    left = await stream.read()
    assert isinstance(left, pb.Lobby) and [s.taken for s in left.seats] == [True, False, False]
    await stub.Start(pb.TokenRequest(token=ann.token))
    started = await stream.read()
    assert isinstance(started, pb.Lobby) and started.status == "started"
    assert started.replica == table.addr
    assert await stream.read() is grpc.aio.EOF  # type: ignore[attr-defined]


async def test_watch_lobby_ends_when_the_table_closes(cluster: Cluster) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    ann = await stub.CreateTable(pb.CreatePrivateRequest(name="Ann"))
    stream = stub.WatchLobby(pb.TokenRequest(token=ann.token))
    first = await stream.read()
    assert isinstance(first, pb.Lobby) and first.status == "waiting"
    await stub.Leave(pb.TokenRequest(token=ann.token))
    closed = await stream.read()
    assert isinstance(closed, pb.Lobby) and closed.status == "closed"
    assert await stream.read() is grpc.aio.EOF  # type: ignore[attr-defined]


async def test_watch_lobby_refuses_unknown_tokens(cluster: Cluster) -> None:
    _, stub = await cluster.start()
    stream = stub.WatchLobby(pb.TokenRequest(token="f" * 32))
    assert await refused(stream.read()) == "bad_token"
