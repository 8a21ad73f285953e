"""``rackem.v1.Table`` over gRPC: one line per RPC onto ``TableService``'s operations.

Every refusal is sent with its stable code (``rackem-error``); Redis unreachable is
``unavailable``; anything else unexpected is logged and answered ``internal`` without
its text (services/common/unexpected.py). ``Link`` carries one gateway's moves,
continues, leaves and subscriptions (``link.py``).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable
from typing import Any, TypeVar

import grpc

from services._gen.rackem.v1 import table_pb2, table_pb2_grpc
from services.common.errors import ServiceError, abort
from services.common.unexpected import refusal_for
from services.table.link import LinkServer
from services.table.service import TableService

__all__ = ["TableServicer"]

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


class TableServicer(table_pb2_grpc.TableServicer):
    def __init__(
        self, service: TableService, link_queue: int = 20_000, link_pace_s: float = 0.0
    ) -> None:
        self._service = service
        self._link_queue = link_queue
        self._link_pace_s = link_pace_s

    async def CreateTable(
        self, request: table_pb2.CreateTableRequest, context: Context
    ) -> table_pb2.CreateTableReply:
        return await _answer(context, "CreateTable", self._service.create(request))

    async def GetSummary(
        self, request: table_pb2.SummaryRequest, context: Context
    ) -> table_pb2.TableSummary:
        return await _answer(context, "GetSummary", self._service.summary(request))

    async def GetRecord(
        self, request: table_pb2.SummaryRequest, context: Context
    ) -> table_pb2.MatchRecord:
        return await _answer(context, "GetRecord", self._service.record(request))

    async def GetDaily(
        self, request: table_pb2.DailyRequest, context: Context
    ) -> table_pb2.DailyReply:
        return await _answer(context, "GetDaily", self._service.daily(request))

    # It writes through the context instead of yielding, which the stub's type does not allow.
    async def Link(  # type: ignore[override]
        self, request_iterator: AsyncIterator[table_pb2.LinkUp], context: Context
    ) -> None:
        try:
            link = LinkServer(self._service, self._link_queue, self._link_pace_s)
            await link.run(request_iterator, context)
        except ServiceError as err:
            await abort(context, err)
