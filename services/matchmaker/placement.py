"""Placing a table on a table replica: the least-loaded live one that is not draining.

Replicas heartbeat their load into the registry about once a second; between heartbeats
this matchmaker adds the tables it placed itself recently, so a burst of starts spreads
over the replicas instead of piling onto the one that looked emptiest. If CreateTable
fails on a replica the next one is tried; ``table_addr`` (the Service in front of all
replicas), when set, is the last resort. No live replica at all: ``no_replica``.

A replica served in this process (``rackem up``: ``local``, by address) is called
directly, with the same deadline; every other one over gRPC.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping

import grpc

from services._gen.rackem.v1 import table_pb2, table_pb2_grpc
from services.common.channels import open_channel
from services.common.errors import ServiceError, from_rpc_error
from services.common.logs import event
from services.common.registry import Registry, Replica

__all__ = ["CreateTable", "Placer"]

log = logging.getLogger("rackem.matchmaker.placement")

_RECENT_S = 2.0  # placements younger than this are not yet in a heartbeat's load

CreateTable = Callable[[table_pb2.CreateTableRequest], Awaitable[table_pb2.CreateTableReply]]


class Placer:
    def __init__(
        self,
        registry: Registry,
        timeout_s: float,
        fallback_addr: str = "",
        monotonic: Callable[[], float] = time.monotonic,
        local: Mapping[str, CreateTable] | None = None,
    ) -> None:
        self._registry = registry
        self._local = dict(local or {})
        self._timeout_s = timeout_s
        self._fallback = fallback_addr
        self._monotonic = monotonic
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._recent: deque[tuple[float, str]] = deque()

    def _recent_counts(self) -> dict[str, int]:
        horizon = self._monotonic() - _RECENT_S
        while self._recent and self._recent[0][0] < horizon:
            self._recent.popleft()
        counts: dict[str, int] = {}
        for _, replica_id in self._recent:
            counts[replica_id] = counts.get(replica_id, 0) + 1
        return counts

    async def candidates(self) -> list[Replica]:
        """Live, non-draining replicas, least loaded first."""
        recent = self._recent_counts()
        live = [r for r in await self._registry.live() if not r.draining]
        return sorted(live, key=lambda r: (r.load + recent.get(r.id, 0), r.id))

    def _stub(self, addr: str) -> table_pb2_grpc.TableAsyncStub:
        channel = self._channels.get(addr)
        if channel is None:
            channel = open_channel(addr)
            self._channels[addr] = channel
        return table_pb2_grpc.TableStub(channel)

    async def create(
        self, request: table_pb2.CreateTableRequest
    ) -> tuple[table_pb2.CreateTableReply, str]:
        """Create the table on the best replica that takes it; the reply and its address."""
        replicas = await self.candidates()
        if not replicas:
            raise ServiceError("no_replica", "no table server is available; try again")
        targets = [(r.id, r.addr) for r in replicas]
        if self._fallback and self._fallback not in {addr for _, addr in targets}:
            targets.append(("", self._fallback))
        for replica_id, addr in targets:
            try:
                reply = await self._create_at(addr, request)
            except ServiceError as err:
                event(log, "create_failed", logging.WARNING, table=request.table_id, code=err.code)
                continue
            if replica_id:
                self._recent.append((self._monotonic(), replica_id))
            return reply, reply.replica or addr
        raise ServiceError("no_replica", "no table server took the table; try again")

    async def _create_at(
        self, addr: str, request: table_pb2.CreateTableRequest
    ) -> table_pb2.CreateTableReply:
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
