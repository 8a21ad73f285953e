"""``rackem.v1.Table`` over gRPC: the seat always comes from the token, errors from one mapping.

Every refusal is a ``ServiceError`` sent with its stable code; anything unexpected is
logged and answered ``internal`` without its text.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable
from typing import Any, TypeVar

import grpc

from services._gen.rackem.v1 import game_pb2, table_pb2, table_pb2_grpc
from services.common.errors import ServiceError, abort
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
    except Exception:
        log.error("internal_error", extra={"fields": {"rpc": rpc}}, exc_info=True)
        await abort(context, ServiceError("internal", "internal error"))


class TableService(table_pb2_grpc.TableServicer):
    def __init__(self, tables: Tables) -> None:
        self._tables = tables

    async def CreateTable(
        self, request: table_pb2.CreateTableRequest, context: Context
    ) -> table_pb2.CreateTableReply:
        return await _answer(context, "CreateTable", self._tables.create(request))

    async def SubmitMove(
        self, request: table_pb2.SubmitMoveRequest, context: Context
    ) -> table_pb2.SubmitMoveReply:
        return await _answer(context, "SubmitMove", self._submit(request))

    async def _submit(self, request: table_pb2.SubmitMoveRequest) -> table_pb2.SubmitMoveReply:
        table = await self._tables.get(request.table_id)
        seat = table.seat_for(request.token)
        if not request.HasField("move"):
            raise ServiceError("malformed_move", "a move is required")
        expected = request.expected_version if request.HasField("expected_version") else None
        return await table.submit(seat, request.move, request.move_id, expected)

    async def Subscribe(
        self, request: table_pb2.SeatRequest, context: Context
    ) -> AsyncIterator[game_pb2.TableView]:
        table, sub = await _answer(context, "Subscribe", self._subscribe(request))
        try:
            while True:
                try:
                    view = await sub.next()
                except ServiceError as err:
                    await abort(context, err)
                if view is None:
                    return
                yield view
        finally:
            table.unsubscribe(sub)

    async def _subscribe(self, request: table_pb2.SeatRequest) -> tuple[Table, Subscriber]:
        table = await self._tables.get(request.table_id)
        return table, await table.subscribe(table.seat_for(request.token))

    async def Continue(self, request: table_pb2.SeatRequest, context: Context) -> table_pb2.Ack:
        return await _answer(context, "Continue", self._continue(request))

    async def _continue(self, request: table_pb2.SeatRequest) -> table_pb2.Ack:
        table = await self._tables.get(request.table_id)
        await table.continue_round(table.seat_for(request.token))
        return table_pb2.Ack()

    async def Leave(self, request: table_pb2.SeatRequest, context: Context) -> table_pb2.Ack:
        return await _answer(context, "Leave", self._leave(request))

    async def _leave(self, request: table_pb2.SeatRequest) -> table_pb2.Ack:
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
