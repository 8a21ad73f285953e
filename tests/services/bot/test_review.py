"""The bot service's Review over a real gRPC channel: a finished match's review for a seat,
made in a worker process while ChooseMove keeps answering."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from functools import cache
from typing import Any

import grpc
import pytest

from rackcore import Match, Rules, observe, to_log
from rackcore.bots import choose
from services._gen.rackem.v1 import bot_pb2, bot_pb2_grpc
from services.bot.server import create_server
from services.bot.settings import BotSettings
from services.common.channels import open_channel
from services.common.errors import from_rpc_error
from services.common.running import Running
from services.table.views import view_json


@pytest.fixture
async def bot(bot_server: Running[None]) -> AsyncIterator[bot_pb2_grpc.BotAsyncStub]:
    async with open_channel(bot_server.addr) as channel:
        yield bot_pb2_grpc.BotStub(channel)


def _played(target: int, seed: bytes, reveal: bool | None = None, moves: int = -1) -> Match:
    """A match between easy bots, to its end (or ``moves`` moves)."""
    match = Match(Rules(players=3, target=target), seed)
    while match.outcome() is None and moves != 0:
        if match.phase == "round_over":
            match.next_round()
        match.apply(choose(observe(match, match.turn), "easy", 1))
        moves -= 1
    return match


@cache
def _log(target: int = 100) -> str:
    """A finished match's log, as the table serves it (``GetRecord``)."""
    return json.dumps(to_log(_played(target, bytes(range(32)))))


async def _refusal(call: Any) -> tuple[grpc.StatusCode, str, str]:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    err = from_rpc_error(caught.value)
    return caught.value.code(), err.code, err.message


@pytest.mark.parametrize("seat", [0, 2])
async def test_a_finished_match_is_reviewed_for_the_seat_asked(
    bot: bot_pb2_grpc.BotAsyncStub, seat: int
) -> None:
    log = json.loads(_log())
    reply = await bot.Review(bot_pb2.ReviewRequest(log_json=_log(), seat=seat))
    review = json.loads(reply.review_json)
    assert review["format"] == "rackem-review/1"
    assert review["seat"] == seat
    own = [at for at, move in enumerate(log["moves"]) if move["seat"] == seat]
    assert [d["at"] for d in review["decisions"]] == own  # every decision of the seat's, only
    assert review["summary"]["decisions"] == len(own) > 0


async def test_a_match_still_running_is_not_reviewed(bot: bot_pb2_grpc.BotAsyncStub) -> None:
    running = _played(100, bytes(32), moves=20)
    for log in (to_log(running), to_log(running, reveal=True)):  # seed hidden; no winner yet
        request = bot_pb2.ReviewRequest(log_json=json.dumps(log), seat=0)
        status, code, message = await _refusal(bot.Review(request))
        assert (status, code) == (grpc.StatusCode.FAILED_PRECONDITION, "not_finished")
        assert "finished" in message


async def test_a_seat_not_at_the_table_and_logs_that_are_none_are_bad_requests(
    bot: bot_pb2_grpc.BotAsyncStub,
) -> None:
    log = json.loads(_log())
    out_of_range = bot_pb2.ReviewRequest(log_json=_log(), seat=3)
    status, code, message = await _refusal(bot.Review(out_of_range))
    assert (status, code) == (grpc.StatusCode.INVALID_ARGUMENT, "bad_request")
    assert "seat 3" in message
    broken = [
        "{not json",
        "[1, 2]",
        json.dumps({**log, "rules": "three"}),
        json.dumps({**log, "moves": 7}),
        json.dumps({**log, "moves": [{"seat": 0, "act": "dance"}]}),
        json.dumps({**log, "moves": log["moves"][:5] + log["moves"][6:]}),
        json.dumps({**log, "seed": "zz"}),
    ]
    for text in broken:
        status, code, _ = await _refusal(bot.Review(bot_pb2.ReviewRequest(log_json=text, seat=0)))
        assert (status, code) == (grpc.StatusCode.INVALID_ARGUMENT, "bad_request"), text
    # ... and the service still reviews what is a log.
    assert (await bot.Review(bot_pb2.ReviewRequest(log_json=_log(), seat=1))).review_json


async def test_choose_move_answers_while_a_review_runs(bot: bot_pb2_grpc.BotAsyncStub) -> None:
    long_log = _log(500)  # a review of about 2 s of CPU
    review = asyncio.ensure_future(bot.Review(bot_pb2.ReviewRequest(log_json=long_log, seat=0)))
    await asyncio.sleep(0.3)
    match = _played(100, bytes(32), moves=3)
    request = bot_pb2.ChooseMoveRequest(
        view_json=view_json(observe(match, match.turn)), level="hard", seed=1
    )
    for _ in range(5):
        started = time.perf_counter()
        assert (await bot.ChooseMove(request, timeout=5)).move.act
        assert time.perf_counter() - started < 0.5
    assert not review.done()  # the moves came while the review was being made
    assert json.loads((await review).review_json)["seat"] == 0


async def test_reviews_past_the_queue_are_refused_busy() -> None:
    running = await create_server(BotSettings(host="127.0.0.1", port=0, review_queue=0))
    try:
        async with open_channel(running.addr) as channel:
            bot = bot_pb2_grpc.BotStub(channel)
            request = bot_pb2.ReviewRequest(log_json=_log(500), seat=1)
            first = asyncio.ensure_future(bot.Review(request))
            await asyncio.sleep(0.3)
            status, code, _ = await _refusal(bot.Review(request))
            assert (status, code) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "busy")
            assert json.loads((await first).review_json)["seat"] == 1
            # Done with the first: the next is taken.
            assert (await bot.Review(bot_pb2.ReviewRequest(log_json=_log(), seat=0))).review_json
    finally:
        await running.stop(0)
