"""Placing a table on a table replica: the least-loaded live one that is not draining.

Replicas heartbeat their load into the registry about once a second; between heartbeats
this matchmaker adds the tables it placed itself recently, so a burst of starts spreads
over the replicas instead of piling onto the one that looked emptiest. If CreateTable
fails on a replica the next one is tried; ``table_addr`` (the Service in front of all
replicas), when set, is the last resort. No live replica at all: ``no_replica``.

The call itself is the matchmaker's client of the table service (table_client.py).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from services._gen.rackem.v1 import table_pb2
from services.common.errors import ServiceError
from services.common.logs import event
from services.common.registry import Registry, Replica
from services.matchmaker.table_client import CreateTable, TableClient

__all__ = ["Placer"]

log = logging.getLogger("rackem.matchmaker.placement")

_RECENT_S = 2.0  # placements younger than this are not yet in a heartbeat's load


class Placer:
    def __init__(
        self,
        registry: Registry,
        timeout_s: float,
        fallback_addr: str = "",
        monotonic: Callable[[], float] = time.monotonic,
        local: Mapping[str, CreateTable] | None = None,
        interceptors: Sequence[Any] = (),
    ) -> None:
        self._registry = registry
        self._tables = TableClient(timeout_s, local, interceptors)
        self._fallback = fallback_addr
        self._monotonic = monotonic
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
                reply = await self._tables.create_at(addr, request)
            except ServiceError as err:
                event(log, "create_failed", logging.WARNING, table=request.table_id, code=err.code)
                continue
            if replica_id:
                self._recent.append((self._monotonic(), replica_id))
            return reply, reply.replica or addr
        raise ServiceError("no_replica", "no table server took the table; try again")

    async def close(self) -> None:
        await self._tables.close()
