"""Whole matches through a table replica on a real gRPC channel, and the replica's own shape."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from rackcore import verify
from services._gen.rackem.v1 import table_pb2, table_pb2_grpc
from services.common.channels import open_channel
from services.common.errors import from_rpc_error
from services.common.logs import JsonFormatter
from services.common.registry import MemoryRegistry
from services.common.running import Running as BotRunning
from services.table.server import create_server
from services.table.store.memory import MemoryStore
from table.decoded import message_of, view_of
from table.table_players import (
    SeatPlayer,
    assert_views_private,
    create_table,
    fast_settings,
    play_to_the_end,
)


@pytest.mark.parametrize(("humans", "bots"), [(2, 0), (1, 2), (2, 2)])
async def test_a_whole_match_plays_through_the_service(
    stub: table_pb2_grpc.TableAsyncStub, humans: int, bots: int
) -> None:
    created = await create_table(stub, humans, bots, target=100)
    assert [bool(t) for t in created.tokens] == [True] * humans + [False] * bots
    players = [
        SeatPlayer(stub, created.table_id, created.tokens[seat], seat) for seat in range(humans)
    ]
    await play_to_the_end(players)

    request = table_pb2.SummaryRequest(table_id=created.table_id)
    summary = await stub.GetSummary(request)
    assert summary.status == "finished" and summary.round_no >= 2
    assert summary.commitment == created.commitment
    record = await stub.GetRecord(request)
    log = json.loads(record.log_json)
    verdict = verify(log)
    assert verdict["valid"] and verdict["finished"]
    assert len(log["moves"]) == summary.version
    assert {m["by"] for m in log["moves"]} == ({"human", "bot"} if bots else {"human"})
    for player in players:
        last = player.views[-1]
        assert last.status == "finished" and message_of(last)["ended_reason"] == "finished"
        assert view_of(last).seed == log["seed"]
        assert all(view_of(v).commitment == created.commitment for v in player.views)
        assert_views_private(log, player.seat, player.views)


async def test_an_all_bot_table_plays_itself_to_the_end(
    stub: table_pb2_grpc.TableAsyncStub,
) -> None:
    created = await create_table(stub, humans=0, bots=3)
    request = table_pb2.SummaryRequest(table_id=created.table_id)
    for _ in range(500):
        summary = await stub.GetSummary(request)
        if summary.status == "finished":
            break
    else:
        pytest.fail("the bots did not finish")
    assert verify(json.loads((await stub.GetRecord(request)).log_json))["finished"]


async def test_the_finished_match_is_logged_once_for_rackem_verify(
    stub: table_pb2_grpc.TableAsyncStub,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    caplog.set_level(logging.INFO, logger="rackem.table")
    created = await create_table(stub, humans=1, bots=1, code="K7MX2Q")
    await play_to_the_end([SeatPlayer(stub, created.table_id, created.tokens[0], 0)])
    records = [r for r in caplog.records if r.getMessage() == "match_record"]
    assert len(records) == 1
    line = JsonFormatter("table").format(records[0])
    data = json.loads(line)
    assert data["code"] == "K7MX2Q" and data["match"]["format"] == "rackem-match/1"
    assert "P0" not in line and created.tokens[0] not in line
    path = tmp_path / "match.json"
    path.write_text(line)
    verify_cli = [sys.executable, "-m", "rackem.cli", "verify", str(path)]
    done = subprocess.run(verify_cli, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["valid"] is True


async def test_the_record_is_refused_while_the_match_runs(
    stub: table_pb2_grpc.TableAsyncStub,
) -> None:
    created = await create_table(stub, humans=1, bots=1)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.GetRecord(table_pb2.SummaryRequest(table_id=created.table_id))
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert from_rpc_error(caught.value).code == "illegal_move"


async def test_an_unknown_table_is_not_found(stub: table_pb2_grpc.TableAsyncStub) -> None:
    for table_id in ("t0000000000000000", "no such/table"):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.GetSummary(table_pb2.SummaryRequest(table_id=table_id))
        assert caught.value.code() == grpc.StatusCode.NOT_FOUND


async def test_health_is_serving_until_stop_then_not(bot_server: BotRunning) -> None:
    running = await create_server(fast_settings(), bot_addr=bot_server.addr)
    async with open_channel(running.addr) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        watch = health.Watch(health_pb2.HealthCheckRequest(service="rackem.v1.Table"))
        first = await watch.read()
        assert first.status == health_pb2.HealthCheckResponse.SERVING
        stopping = asyncio.create_task(running.stop(0.1))
        second = await watch.read()
        assert second.status == health_pb2.HealthCheckResponse.NOT_SERVING
        await stopping


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
async def test_a_replica_on_port_0_advertises_the_port_it_bound(
    bot_server: BotRunning, host: str
) -> None:
    """Without ADVERTISE_ADDR a replica is reached at HOST and the port it bound: with
    PORT=0, the free port it got (in the registry, in its replies), never port 0."""
    registry = MemoryRegistry()
    running = await create_server(
        fast_settings(host=host, port=0),
        store=MemoryStore(),
        registry=registry,
        bot_addr=bot_server.addr,
    )
    try:
        assert running.port != 0 and running.addr == f"127.0.0.1:{running.port}"
        assert [r.addr for r in await registry.live()] == [running.addr]
        async with open_channel(running.addr) as channel:
            created = await create_table(table_pb2_grpc.TableStub(channel), 1, 1)
        assert created.replica == running.addr
    finally:
        await running.stop(0)
