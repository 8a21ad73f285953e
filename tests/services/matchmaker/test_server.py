"""The service shape over real gRPC: health, graceful stop, refusals, unexpected errors."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from redis_engines import Single

from services._gen.rackem.v1 import matchmaker_pb2 as pb
from services._gen.rackem.v1 import matchmaker_pb2_grpc
from services.common.channels import open_channel
from services.common.errors import ERROR_KEY
from services.common.redis_client import connect
from services.common.registry import MemoryRegistry
from services.matchmaker.server import SERVICE_NAME, create_server
from services.matchmaker.store.redis import RedisStore

from .clients import LIMIT_S, refused
from .conftest import FAST, SLOW_FILL, BrokenStore, Cluster


def stable_code(exc: grpc.aio.AioRpcError) -> str | None:
    """The ``rackem-error`` trailing metadata itself (no fallback from the status code)."""
    metadata = cast("Sequence[tuple[str, str | bytes]]", exc.trailing_metadata() or ())
    for key, value in metadata:
        if key == ERROR_KEY:
            return str(value)
    return None


SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


async def test_health_serves_then_goes_not_serving_on_stop() -> None:
    running = await create_server(FAST)
    channel = open_channel(running.addr)
    try:
        health = health_pb2_grpc.HealthStub(channel)
        for name in ("", SERVICE_NAME):
            reply = await health.Check(health_pb2.HealthCheckRequest(service=name))
            assert reply.status == SERVING
        watch = health.Watch(health_pb2.HealthCheckRequest(service=SERVICE_NAME))
        first = await watch.read()
        assert isinstance(first, health_pb2.HealthCheckResponse) and first.status == SERVING
        stopping = asyncio.create_task(running.stop(1.0))
        second = await watch.read()
        assert isinstance(second, health_pb2.HealthCheckResponse)
        assert second.status == NOT_SERVING
        await stopping
    finally:
        await channel.close(None)


async def test_stop_ends_lobby_streams_cleanly_instead_of_cutting_them() -> None:
    running = await create_server(SLOW_FILL)
    channel = open_channel(running.addr)
    try:
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        ann = await stub.CreateTable(pb.CreatePrivateRequest(name="Ann"))
        stream = stub.WatchLobby(pb.TokenRequest(token=ann.token))
        assert isinstance(await stream.read(), pb.Lobby)
        # A long grace: a stream left open would hold the stop for all of it and then be
        # cancelled; ended by the server it finishes with OK at once.
        stopping = asyncio.create_task(running.stop(60))
        async with asyncio.timeout(LIMIT_S):
            assert await stream.read() is grpc.aio.EOF  # type: ignore[attr-defined]
        assert await stream.code() == grpc.StatusCode.OK
        await stopping
    finally:
        await channel.close(None)


async def test_refusals_carry_their_stable_code_in_metadata(cluster: Cluster) -> None:
    _, stub = await cluster.start()
    call = stub.Locate(pb.TokenRequest(token="0" * 32))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert stable_code(caught.value) == "bad_token"


async def test_an_unexpected_failure_is_internal_and_its_text_is_not_sent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="rackem")
    running = await create_server(FAST, BrokenStore(), MemoryRegistry())
    channel = open_channel(running.addr)
    try:
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.QuickMatch(pb.QuickMatchRequest(name="Secret Sam", players=2))
        assert caught.value.code() == grpc.StatusCode.INTERNAL
        assert caught.value.details() == "internal error"
        assert stable_code(caught.value) == "internal"
    finally:
        await channel.close(None)
        await running.stop(0.5)
    failures = [r for r in caplog.records if r.getMessage() == "internal_error"]
    assert failures and failures[0].fields["rpc"] == "QuickMatch"  # type: ignore[attr-defined]
    assert "Secret Sam" not in json.dumps([getattr(r, "fields", {}) for r in caplog.records])


async def test_redis_unreachable_is_unavailable_never_internal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A real Redis client pointed at a port where no Redis listens.
    client = connect("redis://127.0.0.1:1/0")
    caplog.set_level(logging.INFO, logger="rackem")
    running = await create_server(FAST, RedisStore(client), MemoryRegistry())
    channel = open_channel(running.addr)
    try:
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.QuickMatch(pb.QuickMatchRequest(name="Secret Sam", players=2))
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
        assert stable_code(caught.value) == "unavailable"
    finally:
        await channel.close(None)
        await running.stop(0.5)
        await client.aclose()
    assert not [r for r in caplog.records if r.getMessage() == "internal_error"]
    outages = [r for r in caplog.records if r.getMessage() == "store_unavailable"]
    assert outages and outages[0].fields["rpc"] == "QuickMatch"  # type: ignore[attr-defined]
    assert "Secret Sam" not in json.dumps([getattr(r, "fields", {}) for r in caplog.records])


async def test_redis_full_is_unavailable_and_logged_store_full(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    engine = Single(tmp_path)
    engine.start()
    client = connect(engine.url)
    caplog.set_level(logging.INFO, logger="rackem")
    running = await create_server(FAST, RedisStore(client), MemoryRegistry())
    channel = open_channel(running.addr)
    try:
        with engine.server.client() as admin:  # full: maxmemory below what it holds
            admin.config_set("maxmemory", "1")
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.QuickMatch(pb.QuickMatchRequest(name="Ann", players=2))
        assert stable_code(caught.value) == "unavailable"
    finally:
        await channel.close(None)
        await running.stop(0.5)
        await client.aclose()
        engine.stop()
    full = [r for r in caplog.records if r.getMessage() == "store_full"]
    assert full and full[0].levelno == logging.ERROR


async def test_watch_lobby_refuses_a_malformed_token(cluster: Cluster) -> None:
    _, stub = await cluster.start()
    stream = stub.WatchLobby(pb.TokenRequest(token="not a token"))
    assert await refused(stream.read()) == "bad_token"
