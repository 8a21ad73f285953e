"""Helpers for table-service tests: short-clock settings, tables, and players that drive seats.

``SeatPlayer`` plays one human seat the way a gateway would, over the gateway's own
link client (``services.gateway.table_client``) on a real gRPC channel: it subscribes, answers
each view on its turn with a move (chosen by ``rackcore.bots`` from the view it
received), continues at round over, and keeps every view it was sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import grpc
from feeds import reading

from rackcore import Match, Move, match_from_log, observe
from rackcore.bots import choose
from services._gen.rackem.v1 import game_pb2, table_pb2, table_pb2_grpc
from services.common.errors import ServiceError, from_rpc_error
from services.common.running import Running
from services.convert import move_to_pb
from services.gateway.table_client import Link, dial
from services.table.settings import TableSettings
from tests.services.table.decoded import message_of, view_of

FAST: dict[str, Any] = {
    "host": "127.0.0.1",
    "port": 0,
    "decision_ms": 30_000,  # long: tests that need a clock to run out set their own
    "bot_delay_ms": 0,
    "continue_ms": 2_000,
    "abandon_ms": 60_000,
    "bot_timeout_ms": 2_000,
    "lease_ms": 1_500,
    "sweep_ms": 100,
    "heartbeat_ms": 100,
    "heartbeat_ttl_ms": 600,
}


ServerFactory = Callable[..., Awaitable[Running]]
TIMEOUT = 5.0  # seconds a call over a link waits for its answer


def fast_settings(**overrides: Any) -> TableSettings:
    return TableSettings(**{**FAST, **overrides})


def seat_specs(humans: int, bots: int, level: str = "medium") -> list[table_pb2.SeatSpec]:
    people = [table_pb2.SeatSpec(name=f"P{i}") for i in range(humans)]
    return people + [table_pb2.SeatSpec(bot=True, level=level) for _ in range(bots)]


async def create_table(
    stub: table_pb2_grpc.TableAsyncStub,
    humans: int,
    bots: int,
    target: int = 50,
    code: str = "ROOM42",
) -> table_pb2.CreateTableReply:
    rules = game_pb2.Rules(players=humans + bots, target=target)
    request = table_pb2.CreateTableRequest(code=code, rules=rules, seats=seat_specs(humans, bots))
    reply: table_pb2.CreateTableReply = await stub.CreateTable(request)
    return reply


@contextlib.asynccontextmanager
async def linked(stub: table_pb2_grpc.TableAsyncStub) -> AsyncIterator[Link]:
    """A link over ``stub``'s channel (the gateway's client), closed at the end."""
    link = dial(stub)
    try:
        yield link
    finally:
        await link.close()


def error_code(exc: grpc.aio.AioRpcError) -> str:
    return from_rpc_error(exc).code


class SeatPlayer:
    """Plays one seat over a link to ``stub``'s replica (its own, opened by ``run``):
    subscribes, moves on its turn, continues at round over; keeps every view sent."""

    _ids = itertools.count()

    def __init__(
        self,
        stub: table_pb2_grpc.TableAsyncStub,
        table_id: str,
        token: str,
        seat: int,
        plays: bool = True,
        continues: bool = True,
    ) -> None:
        self.stub = stub
        self.table_id = table_id
        self.token = token
        self.seat = seat
        self.plays = plays  # False: never move (a human whose clock will run out)
        self.continues = continues  # False: never press continue at round over
        self.views: list[game_pb2.TableView] = []
        self.refused: list[str] = []
        self._done: set[tuple[int, int, str]] = set()

    async def run(self, stop: Callable[[game_pb2.TableView], bool] | None = None) -> None:
        """Play until the subscription ends (the table is over) or ``stop(view)`` is true;
        raises the ``ServiceError`` it ended with, if any."""
        request = table_pb2.SeatRequest(table_id=self.table_id, token=self.token)
        link = dial(self.stub)
        views = reading(link.subscribe, request)
        try:
            async for view in views:
                self.views.append(view)
                if stop is not None and stop(view):
                    return
                await self.answer(link, view)
        finally:
            views.close()
            await link.close()

    async def answer(self, link: Link, tv: game_pb2.TableView) -> None:
        seat_request = table_pb2.SeatRequest(table_id=self.table_id, token=self.token)
        if tv.status == "round_over" and not message_of(tv)["continued"][self.seat]:
            if self.continues:
                await link.continue_round(seat_request, TIMEOUT)
            return
        view = view_of(tv)
        key = (tv.version, view.round_no, view.phase)
        if not self.plays or tv.status != "playing" or not view.my_turn or key in self._done:
            return
        move = choose(view, "medium", seed=tv.version)
        try:
            await link.submit(
                table_pb2.SubmitMoveRequest(
                    table_id=self.table_id,
                    token=self.token,
                    move=move_to_pb(move),
                    move_id=f"move-{next(self._ids)}",
                    expected_version=tv.version,
                ),
                TIMEOUT,
            )
        except ServiceError as err:
            if err.code != "stale_version":  # a newer view is on its way; answer that one
                raise
            self.refused.append(err.code)
        self._done.add(key)


def assert_views_private(
    log: dict[str, Any], seat: int, views: Sequence[game_pb2.TableView]
) -> None:
    """Every view ``seat`` was sent is exactly ``observe(state, seat)`` at its version.

    The state is rebuilt from the finished match's log, so a view holding anything the
    seat may not see (another rack before the reveal, the seed before the end, a
    hidden stock order or another seat's drawn card) fails here.
    """
    match: Match = match_from_log(log)
    moves = [Move.from_dict(m) for m in log["moves"]]
    applied = 0
    assert views, "the seat was sent no view"
    for tv in views:
        while applied < tv.version:
            match.apply(moves[applied])
            applied += 1
        message = message_of(tv)
        view = message["view"]
        if match.phase == "round_over" and view["round_no"] > match.round_no:
            match.next_round()
        expected = observe(match, seat)
        assert view == expected.to_dict()
        assert message["legal"] == [
            {k: v for k, v in m.to_dict().items() if k != "seat"}
            for m in expected.legal_moves()
            if m.go_out
        ]
        assert view["seat"] == seat
        if view["phase"] not in ("round_over", "match_over"):
            assert view["racks"] is None, "another seat's rack before the reveal"
        if view["phase"] != "match_over":
            assert view["seed"] is None, "the seed before the end"
        if view["stock_known"] is not None:
            assert view["stock_known"] == list(match.stock), "the stock's order while it is hidden"
            assert match.stock_public, "the stock's order while it is hidden"
        for info in message["seats"]:
            assert set(info) == {
                "seat",
                "name",
                "kind",
                "connected",
                "level",
                "left",
            }


async def play_to_the_end(players: Sequence[SeatPlayer], timeout: float = 60) -> None:
    async with asyncio.timeout(timeout):
        await asyncio.gather(*(p.run() for p in players))
