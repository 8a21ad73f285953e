"""Tables open to spectators, and a spectator's waiting room by code, over real gRPC on
both stores."""

from __future__ import annotations

import grpc

from services._gen.rackem.v1 import game_pb2
from services._gen.rackem.v1 import matchmaker_pb2 as pb

from .clients import refused
from .conftest import SLOW_FILL, Cluster
from .tableserver import RecordingTable


async def test_a_creator_opens_a_table_to_spectators_and_its_table_is_told(
    cluster: Cluster, table: RecordingTable
) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    three = game_pb2.Rules(players=3)
    ann = await stub.CreateTable(
        pb.CreatePrivateRequest(name="Ann", rules=three, spectators="public")
    )
    bob = await stub.CreateTable(pb.CreatePrivateRequest(name="Bob", rules=three))
    off = await stub.CreateTable(pb.CreatePrivateRequest(name="Cy", rules=three, spectators="off"))
    quick = await stub.QuickMatch(pb.QuickMatchRequest(name="Di", players=3))
    assert [s.lobby.spectators for s in (ann, bob, off, quick)] == ["public", "off", "off", "off"]
    lobby = await stub.GetLobby(pb.LobbyRequest(code=ann.code.lower()))
    assert lobby.spectators == "public"
    for seated in (ann, bob):
        await stub.Start(pb.TokenRequest(token=seated.token))
    assert [call.spectators for call in table.calls] == [True, False]
    request = pb.CreatePrivateRequest(name="Eve", spectators="everyone")
    assert await refused(stub.CreateTable(request)) == "bad_request"


async def test_watch_code_sends_each_change_until_the_start(
    cluster: Cluster, table: RecordingTable
) -> None:
    _, stub = await cluster.start(SLOW_FILL)
    ann = await stub.CreateTable(
        pb.CreatePrivateRequest(name="Ann", rules=game_pb2.Rules(players=3), spectators="public")
    )
    stream = stub.WatchCode(pb.LobbyRequest(code=ann.code.lower()))
    first = await stream.read()
    assert isinstance(first, pb.Lobby) and [s.taken for s in first.seats] == [True, False, False]
    await stub.JoinByCode(pb.JoinRequest(code=ann.code, name="Bob"))
    joined = await stream.read()
    assert isinstance(joined, pb.Lobby) and [s.name for s in joined.seats] == ["Ann", "Bob", ""]
    await stub.Start(pb.TokenRequest(token=ann.token))
    started = await stream.read()
    assert isinstance(started, pb.Lobby) and started.status == "started"
    assert started.replica == table.addr
    assert await stream.read() is grpc.aio.EOF  # type: ignore[attr-defined]
    assert await refused(stub.WatchCode(pb.LobbyRequest(code="ZZZZZZ")).read()) == "no_code"
