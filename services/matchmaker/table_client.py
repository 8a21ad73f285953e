"""The matchmaker's client of the table service: ``CreateTable`` at a replica's address.

A replica served in this process (``rackem up``: ``local``, by address) is called
directly, with the same deadline; every other one over gRPC, one channel per address.
A refusal or a failure is a ``ServiceError`` either way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import grpc

from services._gen.rackem.v1 import table_pb2, table_pb2_grpc
from services.common.channels import open_channel
from services.common.errors import ServiceError, from_rpc_error

__all__ = ["CreateTable", "TableClient"]

CreateTable = Callable[[table_pb2.CreateTableRequest], Awaitable[table_pb2.CreateTableReply]]


class TableClient:
    def __init__(
        self,
        timeout_s: float,
        local: Mapping[str, CreateTable] | None = None,
        interceptors: Sequence[Any] = (),
    ) -> None:
        """Calls of ``timeout_s``; ``local`` replicas by address; every channel with
        ``interceptors`` (services/common/grpc_metrics.py)."""
        self._timeout_s = timeout_s
        self._interceptors = interceptors
        self._local = dict(local or {})
        self._channels: dict[str, grpc.aio.Channel] = {}

    def _stub(self, addr: str) -> table_pb2_grpc.TableAsyncStub:
        channel = self._channels.get(addr)
        if channel is None:
            channel = open_channel(addr, interceptors=self._interceptors)
            self._channels[addr] = channel
        return table_pb2_grpc.TableStub(channel)

    async def create_at(
        self, addr: str, request: table_pb2.CreateTableRequest
    ) -> table_pb2.CreateTableReply:
        """``CreateTable`` at the replica at ``addr``."""
        local = self._local.get(addr)
        if local is None:
            try:
                reply: table_pb2.CreateTableReply
                reply = await self._stub(addr).CreateTable(request, timeout=self._timeout_s)
            except grpc.aio.AioRpcError as exc:
                raise from_rpc_error(exc) from None
            return reply
        try:
            async with asyncio.timeout(self._timeout_s):
                return await local(request)
        except TimeoutError:
            raise ServiceError("unavailable", "the table replica did not answer in time") from None

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close(None)
        self._channels.clear()
