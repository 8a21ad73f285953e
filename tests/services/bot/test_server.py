"""The bot service over a real gRPC channel, and as its own process."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from rackcore import Match, Move, Rules, observe
from services._gen.rackem.v1 import bot_pb2, bot_pb2_grpc
from services.common.channels import open_channel
from services.common.errors import from_rpc_error
from services.common.running import Running
from services.convert import move_from_pb
from services.table.views import view_json

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
async def bot(bot_server: Running[None]) -> AsyncIterator[bot_pb2_grpc.BotAsyncStub]:
    async with open_channel(bot_server.addr) as channel:
        yield bot_pb2_grpc.BotStub(channel)


def _match_in_resolve() -> Match:
    match = Match(Rules(players=3), bytes(range(32)))
    match.apply(Move.draw(match.turn, "stock"))
    return match


@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
async def test_a_bot_answers_a_legal_move_for_the_seat_to_move(
    bot: bot_pb2_grpc.BotAsyncStub, level: str
) -> None:
    match = Match(Rules(players=2), bytes(32))
    for _ in range(6):  # draws and resolves, each chosen by the service
        view = observe(match, match.turn)
        reply = await bot.ChooseMove(
            bot_pb2.ChooseMoveRequest(view_json=view_json(view), level=level, seed=7)
        )
        move = move_from_pb(reply.move, seat=match.turn)
        assert move in view.legal_moves()
        match.apply(move)


async def test_the_same_request_gets_the_same_move(bot: bot_pb2_grpc.BotAsyncStub) -> None:
    match = _match_in_resolve()
    request = bot_pb2.ChooseMoveRequest(
        view_json=view_json(observe(match, match.turn)), level="hard", seed=42
    )
    assert await bot.ChooseMove(request) == await bot.ChooseMove(request)


async def _code(call: object) -> str:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call  # type: ignore[misc]
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    return from_rpc_error(caught.value).code


async def test_requests_it_cannot_answer_are_bad_requests(bot: bot_pb2_grpc.BotAsyncStub) -> None:
    match = _match_in_resolve()
    waiting = (match.turn + 1) % 3
    own = observe(match, match.turn).to_dict()

    def changed(**fields: object) -> str:
        return json.dumps({**own, **fields})

    requests = [
        bot_pb2.ChooseMoveRequest(view_json=view_json(observe(match, waiting)), level="medium"),
        bot_pb2.ChooseMoveRequest(view_json=json.dumps(own), level="godlike"),
        bot_pb2.ChooseMoveRequest(view_json=json.dumps(own), level=""),
        bot_pb2.ChooseMoveRequest(level="medium"),
        bot_pb2.ChooseMoveRequest(view_json=changed(seat=7), level="medium"),
        bot_pb2.ChooseMoveRequest(view_json=changed(held=None), level="medium"),
        # JSON that is no view, or a view whose fields hold what no table sends
        bot_pb2.ChooseMoveRequest(view_json="{not json", level="medium"),
        bot_pb2.ChooseMoveRequest(view_json="[1, 2]", level="medium"),
        bot_pb2.ChooseMoveRequest(view_json=changed(rules={"players": 9}), level="medium"),
        bot_pb2.ChooseMoveRequest(view_json=changed(rounds=[{"points": []}]), level="medium"),
        bot_pb2.ChooseMoveRequest(view_json=changed(rack=["a"] * 10), level="medium"),
        bot_pb2.ChooseMoveRequest(view_json=changed(held="7"), level="medium"),
        bot_pb2.ChooseMoveRequest(view_json=changed(turn=True), level="medium"),
        bot_pb2.ChooseMoveRequest(view_json=changed(known=[[1.5]] * 3), level="medium"),
        bot_pb2.ChooseMoveRequest(view_json=changed(repair_tokens=[1, 0, 0]), level="medium"),
        bot_pb2.ChooseMoveRequest(view_json=changed(stock_known=["x"]), level="medium"),
        bot_pb2.ChooseMoveRequest(view_json=changed(racks=[[1], "x"]), level="medium"),
        bot_pb2.ChooseMoveRequest(
            view_json=changed(rounds=[{"winner": "0", "points": [1, 2, 3]}]), level="medium"
        ),
        bot_pb2.ChooseMoveRequest(view_json=changed(seed=7), level="medium"),
    ]
    for request in requests:
        assert await _code(bot.ChooseMove(request)) == "bad_request"


async def test_the_bot_service_reports_serving(bot_server: Running[None]) -> None:
    async with open_channel(bot_server.addr) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for service in ("", "rackem.v1.Bot"):
            reply = await health.Check(health_pb2.HealthCheckRequest(service=service))
            assert reply.status == health_pb2.HealthCheckResponse.SERVING


async def test_the_bot_process_serves_until_sigterm_then_exits_cleanly(tmp_path: Path) -> None:
    log_path = tmp_path / "bot.log"
    env = {**os.environ, "HOST": "127.0.0.1", "PORT": "0", "STOP_GRACE_MS": "100"}
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "services.bot"], cwd=ROOT, env=env, stderr=log
        )
        try:
            port = None
            async with asyncio.timeout(30):
                while port is None:
                    assert process.poll() is None, log_path.read_text()
                    for line in log_path.read_text().splitlines():
                        if '"bot_serving"' in line:
                            port = json.loads(line)["port"]
                    await asyncio.sleep(0.05)
            async with open_channel(f"127.0.0.1:{port}") as channel:
                health = health_pb2_grpc.HealthStub(channel)
                reply = await health.Check(health_pb2.HealthCheckRequest(service="rackem.v1.Bot"))
                assert reply.status == health_pb2.HealthCheckResponse.SERVING
            process.send_signal(signal.SIGTERM)
            assert await asyncio.to_thread(process.wait, 20) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    events = [json.loads(line)["event"] for line in log_path.read_text().splitlines()]
    assert events[-1] == "bot_stopped"
