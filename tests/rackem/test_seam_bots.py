"""``rackem up``'s seam to its bot service (rackem/seam/bots.py): the table's call answered in
process as over gRPC, and a replica given it playing its bots through it."""

from __future__ import annotations

import json
import logging

import pytest

from rackcore import Match, Rules, observe, to_log
from rackcore.bots import choose
from rackem.seam.bots import LocalBots
from services._gen.rackem.v1 import bot_pb2, table_pb2, table_pb2_grpc
from services.bot.service import BotService
from services.common.channels import open_channel
from services.common.errors import ServiceError
from services.common.registry import MemoryRegistry
from services.convert import move_from_pb
from services.table.server import create_server
from services.table.settings import TableSettings
from services.table.store.memory import MemoryStore
from services.table.views import view_json
from tests.services.table.table_players import FAST, SeatPlayer, create_table, play_to_the_end


def _request(level: str = "hard") -> tuple[Match, bot_pb2.ChooseMoveRequest]:
    match = Match(Rules(players=3), seed=bytes(range(32)))
    view = observe(match, match.turn)
    return match, bot_pb2.ChooseMoveRequest(view_json=view_json(view), level=level, seed=5)


class _Counting(BotService):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[bot_pb2.ChooseMoveRequest] = []
        self.replies: list[bot_pb2.ChooseMoveReply] = []

    def choose_move(self, request: bot_pb2.ChooseMoveRequest) -> bot_pb2.ChooseMoveReply:
        self.seen.append(request)
        reply = super().choose_move(request)
        self.replies.append(reply)
        return reply


async def test_a_move_is_chosen_in_process_from_copies_both_ways() -> None:
    match, request = _request()
    service = _Counting()
    reply = await LocalBots(service).ChooseMove(request, timeout=1.0)
    move = move_from_pb(reply.move, seat=match.turn)
    assert move in match.legal_moves()
    # The bot got its own request, the table its own reply: as if they had crossed a wire.
    assert service.seen[0] == request and service.seen[0] is not request
    assert service.replies[0] == reply and service.replies[0] is not reply
    # ... and the same seed gives the same move the bot service gives over gRPC.
    assert reply == BotService().choose_move(request)


async def test_a_refusal_is_the_servicers_and_anything_else_is_internal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    _, request = _request(level="godlike")
    with pytest.raises(ServiceError) as refused:
        await LocalBots(BotService()).ChooseMove(request)
    assert refused.value.code == "bad_request"

    class Broken(BotService):
        def choose_move(self, request: bot_pb2.ChooseMoveRequest) -> bot_pb2.ChooseMoveReply:
            raise KeyError("a bug")

    _, request = _request()
    with caplog.at_level(logging.ERROR), pytest.raises(ServiceError) as failed:
        await LocalBots(Broken()).ChooseMove(request)
    assert (failed.value.code, failed.value.message) == ("internal", "internal error")
    assert "a bug" not in failed.value.message
    assert any(r.getMessage() == "internal_error" for r in caplog.records)


async def test_a_replica_given_the_bots_in_process_plays_its_bots_through_them() -> None:
    service = _Counting()
    running = await create_server(
        TableSettings(**{**FAST, "stop_grace_ms": 0}),
        store=MemoryStore(),
        registry=MemoryRegistry(),
        bots=LocalBots(service),
    )
    channel = open_channel(running.addr)
    try:
        stub = table_pb2_grpc.TableStub(channel)
        created = await create_table(stub, humans=1, bots=2)  # type: ignore[arg-type]
        player = SeatPlayer(stub, created.table_id, created.tokens[0], 0)  # type: ignore[arg-type]
        await play_to_the_end([player])
        record = await stub.GetRecord(table_pb2.SummaryRequest(table_id=created.table_id))
        bot_moves = [m for m in json.loads(record.log_json)["moves"] if m["seat"] != 0]
        # Every bot move was the bot service's, none the replica's fallback's.
        assert running.service.tables.bots.fallbacks == 0
        assert len(bot_moves) == len(service.replies) > 10
        assert all(m["by"] == "bot" for m in bot_moves)
    finally:
        await channel.close()
        await running.stop(0)


async def test_a_review_is_made_in_process_off_the_loop_and_refused_as_over_grpc() -> None:
    match = Match(Rules(players=2, target=50), seed=bytes(range(32)))
    while match.outcome() is None:
        if match.phase == "round_over":
            match.next_round()
        match.apply(choose(observe(match, match.turn), "easy", 1))
    service = BotService()
    try:
        bots = LocalBots(service)
        log_json = json.dumps(to_log(match))
        reply = await bots.Review(bot_pb2.ReviewRequest(log_json=log_json, seat=1), timeout=30)
        assert json.loads(reply.review_json)["seat"] == 1
        with pytest.raises(ServiceError) as refused:
            await bots.Review(bot_pb2.ReviewRequest(log_json=log_json, seat=2), timeout=30)
        assert refused.value.code == "bad_request"
        hidden = json.dumps(to_log(match, reveal=False) | {"result": {"winner": None}})
        with pytest.raises(ServiceError) as running:
            await bots.Review(bot_pb2.ReviewRequest(log_json=hidden, seat=0), timeout=30)
        assert running.value.code == "not_finished"
    finally:
        await service.close()
