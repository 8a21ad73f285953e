"""``rackem.v1.Table`` over gRPC: the seat always comes from the token, errors from one mapping.

Every refusal is a ``ServiceError`` sent with its stable code; Redis unreachable is
``unavailable``; anything else unexpected is logged and answered ``internal`` without its
text (services/common/unexpected.py).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from typing import Any, TypeVar

import grpc

from services._gen.rackem.v1 import game_pb2, table_pb2, table_pb2_grpc
from services.common.errors import ServiceError, abort
from services.common.in_process import Writer
from services.common.unexpected import refusal_for
from services.table.link import LinkServer
from services.table.subscribers import Subscriber
from services.table.table import Table
from services.table.tables import Tables

__all__ = ["TableService"]

log = logging.getLogger("rackem.table")

T = TypeVar("T")
Context = grpc.aio.ServicerContext[Any, Any]


async def _answer(context: Context, rpc: str, call: Awaitable[T]) -> T:
    try:
        return await call
    except ServiceError as err:
        await abort(context, err)
    except Exception as exc:
        await abort(context, refusal_for(log, rpc, exc))


class TableService(table_pb2_grpc.TableServicer):
    """The RPCs, and the operations behind them that ``Link`` shares."""

    def __init__(self, tables: Tables, link_queue: int = 20_000) -> None:
        self._tables = tables
        self._link_queue = link_queue

    async def CreateTable(
        self, request: table_pb2.CreateTableRequest, context: Context
    ) -> table_pb2.CreateTableReply:
        return await _answer(context, "CreateTable", self._tables.create(request))

    async def create(self, request: table_pb2.CreateTableRequest) -> table_pb2.CreateTableReply:
        """CreateTable for a caller in this process (``rackem up``'s matchmaker): the same
        reply, or the same refusal as a ``ServiceError``; anything unexpected is logged
        and refused ``internal``, as over gRPC. The request is parsed from its bytes, so
        the table shares no object with its caller."""
        own = table_pb2.CreateTableRequest.FromString(request.SerializeToString())
        try:
            return await self._tables.create(own)
        except ServiceError:
            raise
        except Exception as exc:
            raise refusal_for(log, "CreateTable", exc) from None

    async def SubmitMove(
        self, request: table_pb2.SubmitMoveRequest, context: Context
    ) -> table_pb2.SubmitMoveReply:
        return await _answer(context, "SubmitMove", self.submit(request))

    async def submit(self, request: table_pb2.SubmitMoveRequest) -> table_pb2.SubmitMoveReply:
        table = await self._tables.get(request.table_id)
        seat = table.seat_for(request.token)
        if not request.HasField("move"):
            raise ServiceError("malformed_move", "a move is required")
        expected = request.expected_version if request.HasField("expected_version") else None
        return await table.submit(seat, request.move, request.move_id, expected)

    async def Subscribe(
        self, request: table_pb2.SeatRequest, context: Context
    ) -> AsyncIterator[game_pb2.TableView]:
        async with aclosing(_streamed(self.views(request), context, "Subscribe")) as views:
            async for view in views:
                yield view

    async def views(self, request: table_pb2.SeatRequest) -> AsyncGenerator[game_pb2.TableView]:
        """The seat's views until its table is over or a newer subscription replaces this one."""
        table = await self._tables.get(request.table_id)
        sub = await table.subscribe(table.seat_for(request.token))
        try:
            while (view := await sub.next()) is not None:
                yield view
        finally:
            table.unsubscribe(sub)

    async def follow(
        self, request: table_pb2.SeatRequest, notify: Callable[[], None]
    ) -> tuple[Table, Subscriber]:
        """The seat's subscription for a reader that never waits (``Subscriber``'s
        ``notify``); ``table.unsubscribe`` it when done."""
        table = await self._tables.get(request.table_id)
        return table, await table.subscribe(table.seat_for(request.token), notify)

    async def Watch(
        self, request: table_pb2.SummaryRequest, context: Context
    ) -> AsyncIterator[game_pb2.TableView]:
        async with aclosing(_streamed(self.watching(request), context, "Watch")) as views:
            async for view in views:
                yield view

    async def watching(
        self, request: table_pb2.SummaryRequest
    ) -> AsyncGenerator[game_pb2.TableView]:
        """A spectator's views until the table is over."""
        table = await self._tables.get(request.table_id)
        sub = await table.watch()
        try:
            while (view := await sub.next()) is not None:
                yield view
        finally:
            table.unsubscribe(sub)

    async def spectate(
        self, request: table_pb2.SummaryRequest, notify: Callable[[], None]
    ) -> tuple[Table, Subscriber]:
        """A spectator's subscription for a reader that never waits (``follow``'s twin)."""
        table = await self._tables.get(request.table_id)
        return table, await table.watch(notify)

    async def Continue(self, request: table_pb2.SeatRequest, context: Context) -> table_pb2.Ack:
        return await _answer(context, "Continue", self.continue_round(request))

    async def continue_round(self, request: table_pb2.SeatRequest) -> table_pb2.Ack:
        table = await self._tables.get(request.table_id)
        await table.continue_round(table.seat_for(request.token))
        return table_pb2.Ack()

    async def Leave(self, request: table_pb2.SeatRequest, context: Context) -> table_pb2.Ack:
        return await _answer(context, "Leave", self.leave(request))

    async def leave(self, request: table_pb2.SeatRequest) -> table_pb2.Ack:
        table = await self._tables.get(request.table_id)
        await table.leave(table.seat_for(request.token, left_ok=True))
        return table_pb2.Ack()

    async def GetSummary(
        self, request: table_pb2.SummaryRequest, context: Context
    ) -> table_pb2.TableSummary:
        return await _answer(context, "GetSummary", self._summary(request))

    async def _summary(self, request: table_pb2.SummaryRequest) -> table_pb2.TableSummary:
        return await (await self._tables.get(request.table_id)).summary()

    async def GetRecord(
        self, request: table_pb2.SummaryRequest, context: Context
    ) -> table_pb2.MatchRecord:
        return await _answer(context, "GetRecord", self._record(request))

    async def _record(self, request: table_pb2.SummaryRequest) -> table_pb2.MatchRecord:
        return await (await self._tables.get(request.table_id)).record()

    # It writes through the context instead of yielding, which the stub's type does not allow.
    async def Link(  # type: ignore[override]
        self, request_iterator: AsyncIterator[table_pb2.LinkUp], context: Context
    ) -> None:
        try:
            await self.link(request_iterator, context)
        except ServiceError as err:
            await abort(context, err)

    async def link(
        self, requests: AsyncIterator[table_pb2.LinkUp], out: Writer[table_pb2.LinkDown]
    ) -> None:
        """Serve one gateway's link (over gRPC, or in process under ``rackem up``)."""
        await LinkServer(self, self._link_queue).run(requests, out)


async def _streamed(
    views: AsyncGenerator[game_pb2.TableView], context: Context, rpc: str
) -> AsyncGenerator[game_pb2.TableView]:
    """A stream of ``views`` for a gRPC caller: a refusal ends it with its code, an outage
    ``unavailable``, anything unexpected is logged and ``internal``."""
    try:
        while True:
            try:
                view = await anext(views)
            except StopAsyncIteration:
                return
            except ServiceError as err:
                await abort(context, err)
            except Exception as exc:
                await abort(context, refusal_for(log, rpc, exc))
            yield view
    finally:
        await views.aclose()
