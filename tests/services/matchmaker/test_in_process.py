"""The matchmaker called in process by ``rackem up``'s gateway (``LocalMatchmaker``,
rackem/seam/matchmaker.py): the same answers and the same refusals as over gRPC, its
deadline, its lobby stream, and replies that are the caller's own copies."""

from __future__ import annotations

import asyncio
import json
import logging

import grpc
import pytest

from rackem.seam.matchmaker import LocalMatchmaker
from services._gen.rackem.v1 import game_pb2, matchmaker_pb2_grpc
from services._gen.rackem.v1 import matchmaker_pb2 as pb
from services.common.channels import open_channel
from services.common.errors import ServiceError, from_rpc_error
from services.common.redis_client import connect
from services.common.registry import MemoryRegistry
from services.matchmaker.server import create_server
from services.matchmaker.store.redis import RedisStore

from .clients import LIMIT_S
from .conftest import FAST, SLOW_FILL, BrokenStore, Cluster


async def test_a_private_table_fills_and_its_lobby_streams_in_process(cluster: Cluster) -> None:
    running, _ = await cluster.start(SLOW_FILL)
    local = LocalMatchmaker(running.service)
    ann = await local.CreateTable(pb.CreatePrivateRequest(name="Ann"), timeout=5)
    assert (ann.seat, ann.lobby.status, ann.lobby.code) == (0, "waiting", ann.code)
    stream = local.WatchLobby(pb.TokenRequest(token=ann.token))
    first = await anext(aiter(stream))
    assert [s.name for s in first.seats if s.taken] == ["Ann"]
    bob = await local.JoinByCode(pb.JoinRequest(code=ann.code.lower(), name="Bob"), timeout=5)
    assert bob.seat == 1 and bob.table_id == ann.table_id
    async with asyncio.timeout(LIMIT_S):
        update = await anext(aiter(stream))
    assert [s.name for s in update.seats if s.taken] == ["Ann", "Bob"]
    located = await local.Locate(pb.TokenRequest(token=bob.token), timeout=5)
    assert (located.table_id, located.seat) == (ann.table_id, 1)
    lobby = await local.GetLobby(pb.LobbyRequest(code=ann.code), timeout=5)
    assert lobby == update
    assert stream.cancel() and not stream.cancel()
    with pytest.raises(ServiceError) as ended:
        await anext(aiter(stream))
    assert ended.value.code == "unavailable"


@pytest.mark.parametrize(
    ("rpc", "request_"),
    [
        ("Locate", pb.TokenRequest(token="0" * 32)),
        ("Start", pb.TokenRequest(token="not a token")),
        ("JoinByCode", pb.JoinRequest(code="ZZZZZZ", name="Bob")),
        ("JoinByCode", pb.JoinRequest(code="ab", name="Bob")),
        ("GetLobby", pb.LobbyRequest(code="ZZZZZZ")),
        ("CreateTable", pb.CreatePrivateRequest(name="Ann", rules=game_pb2.Rules(players=9))),
        ("CreateTable", pb.CreatePrivateRequest(name="Ann", level="godlike")),
        ("QuickMatch", pb.QuickMatchRequest(name="", players=2)),
    ],
)
async def test_refusals_are_the_ones_grpc_gives(
    cluster: Cluster, rpc: str, request_: object
) -> None:
    running, stub = await cluster.start()
    with pytest.raises(grpc.aio.AioRpcError) as over_grpc:
        await getattr(stub, rpc)(request_, timeout=5)
    expected = from_rpc_error(over_grpc.value)
    with pytest.raises(ServiceError) as in_process:
        await getattr(LocalMatchmaker(running.service), rpc)(request_, timeout=5)
    assert (in_process.value.code, in_process.value.message) == (expected.code, expected.message)
    assert expected.code not in ("internal", "unavailable")


async def test_watch_lobby_refuses_a_malformed_token(cluster: Cluster) -> None:
    running, _ = await cluster.start()
    stream = LocalMatchmaker(running.service).WatchLobby(pb.TokenRequest(token="not a token"))
    with pytest.raises(ServiceError) as refused:
        await anext(aiter(stream))
    assert refused.value.code == "bad_token"


async def test_a_stop_ends_the_lobby_stream() -> None:
    running = await create_server(SLOW_FILL)
    local = LocalMatchmaker(running.service)
    ann = await local.CreateTable(pb.CreatePrivateRequest(name="Ann"), timeout=5)
    lobbies = aiter(local.WatchLobby(pb.TokenRequest(token=ann.token)))
    await anext(lobbies)
    stopping = asyncio.create_task(running.stop(60))
    async with asyncio.timeout(LIMIT_S):
        with pytest.raises(StopAsyncIteration):
            await anext(lobbies)
    await stopping


async def test_a_call_past_its_timeout_is_unavailable() -> None:
    # The store's Redis connects to a socket that accepts and never answers: the call waits.
    accepted: list[asyncio.StreamWriter] = []
    silent = await asyncio.start_server(lambda _, w: accepted.append(w), "127.0.0.1", 0)
    port = silent.sockets[0].getsockname()[1]
    client = connect(f"redis://127.0.0.1:{port}/0")
    running = await create_server(FAST, RedisStore(client), MemoryRegistry())
    try:
        with pytest.raises(ServiceError) as late:
            await LocalMatchmaker(running.service).QuickMatch(
                pb.QuickMatchRequest(name="Ann", players=2), timeout=0.2
            )
        assert (late.value.code, late.value.message) == (
            "unavailable",
            "the matchmaker did not answer in time",
        )
    finally:
        await running.stop(0.5)
        await client.aclose()
        silent.close()
        for writer in accepted:
            writer.close()


async def test_an_unexpected_failure_is_internal_and_logged_without_names(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="rackem")
    running = await create_server(FAST, BrokenStore(), MemoryRegistry())
    channel = open_channel(running.addr)
    try:
        request = pb.QuickMatchRequest(name="Secret Sam", players=2)
        with pytest.raises(ServiceError) as failed:
            await LocalMatchmaker(running.service).QuickMatch(request, timeout=5)
        assert (failed.value.code, failed.value.message) == ("internal", "internal error")
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as over_grpc:
            await stub.QuickMatch(request, timeout=5)
        assert from_rpc_error(over_grpc.value).code == "internal"
    finally:
        await channel.close(None)
        await running.stop(0.5)
    failures = [r for r in caplog.records if r.getMessage() == "internal_error"]
    assert [r.fields["rpc"] for r in failures] == ["QuickMatch", "QuickMatch"]  # type: ignore[attr-defined]
    assert "Secret Sam" not in json.dumps([getattr(r, "fields", {}) for r in caplog.records])


async def test_redis_unreachable_is_unavailable_in_process_and_over_grpc(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = connect("redis://127.0.0.1:1/0")  # nothing listens there: refused at once
    caplog.set_level(logging.INFO, logger="rackem")
    running = await create_server(FAST, RedisStore(client), MemoryRegistry())
    channel = open_channel(running.addr)
    try:
        request = pb.QuickMatchRequest(name="Secret Sam", players=2)
        with pytest.raises(ServiceError) as failed:
            await LocalMatchmaker(running.service).QuickMatch(request, timeout=5)
        assert failed.value.code == "unavailable"
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as over_grpc:
            await stub.QuickMatch(request, timeout=5)
        assert from_rpc_error(over_grpc.value).code == "unavailable"
    finally:
        await channel.close(None)
        await running.stop(0.5)
        await client.aclose()
    assert not [r for r in caplog.records if r.getMessage() == "internal_error"]
