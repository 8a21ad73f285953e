"""The in-process table store (``rackem up`` without Redis): the Redis store's semantics in dicts.

Values are kept as the same JSON text Redis holds, so nothing a caller keeps can
alias what is stored. Leases, the lease index and finished tables use a monotonic clock.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from services.table.lease_index import FINISHED
from services.table.store import AppendResult
from services.table.stored import Earlier, Reply, StoredTable, TableMeta, TableState

__all__ = ["MemoryStore"]


@dataclass(slots=True)
class _Entry:
    meta: str
    state: str
    log: list[str] = field(default_factory=list)
    versions: dict[tuple[int, str], int] = field(default_factory=dict)
    latest: dict[int, tuple[str, str]] = field(default_factory=dict)
    expires: float | None = None


class MemoryStore:
    def __init__(self) -> None:
        self._tables: dict[str, _Entry] = {}
        self._leases: dict[str, tuple[str, float]] = {}
        self._live: dict[str, float] = {}  # the lease index: id -> when its lease expires

    def _entry(self, table_id: str) -> _Entry | None:
        entry = self._tables.get(table_id)
        if entry is not None and entry.expires is not None and entry.expires <= time.monotonic():
            del self._tables[table_id]
            return None
        return entry

    def _lease(self, table_id: str) -> str | None:
        held = self._leases.get(table_id)
        if held is None:
            return None
        if held[1] <= time.monotonic():
            del self._leases[table_id]
            return None
        return held[0]

    def _set_lease(self, table_id: str, owner: str, lease_ms: int) -> None:
        self._leases[table_id] = (owner, time.monotonic() + lease_ms / 1000)

    async def create(self, meta: TableMeta, state: TableState, owner: str, lease_ms: int) -> bool:
        if self._entry(meta.table_id) is not None:
            return False
        self._tables[meta.table_id] = _Entry(meta.to_json(), state.to_json())
        self._set_lease(meta.table_id, owner, lease_ms)
        self._live[meta.table_id] = time.monotonic() + lease_ms / 1000
        return True

    async def load(self, table_id: str) -> StoredTable | None:
        entry = self._entry(table_id)
        if entry is None:
            return None
        return StoredTable(
            TableMeta.from_json(entry.meta),
            [json.loads(m) for m in entry.log],
            TableState.from_json(entry.state),
        )

    async def append(
        self,
        table_id: str,
        owner: str,
        index: int,
        move: dict[str, Any],
        state: TableState,
        reply: Reply | None = None,
        lease_ms: int = 0,
    ) -> AppendResult:
        entry = self._entry(table_id)
        if entry is None or self._lease(table_id) != owner:
            return "lost"
        if len(entry.log) != index:
            return "conflict"
        entry.log.append(orjson.dumps(move).decode())
        entry.state = state.to_json()
        if lease_ms:
            self._set_lease(table_id, owner, lease_ms)
        if reply is not None:
            entry.versions[reply.seat, reply.move_id] = reply.version
            entry.latest[reply.seat] = (reply.move_id, reply.body)
        return "ok"

    async def save_state(
        self, table_id: str, owner: str, state: TableState, lease_ms: int = 0
    ) -> bool:
        entry = self._entry(table_id)
        if entry is None or self._lease(table_id) != owner:
            return False
        entry.state = state.to_json()
        if lease_ms:
            self._set_lease(table_id, owner, lease_ms)
        return True

    async def reply(self, table_id: str, seat: int, move_id: str) -> Earlier | None:
        entry = self._entry(table_id)
        version = None if entry is None else entry.versions.get((seat, move_id))
        if entry is None or version is None:
            return None
        latest_id, body = entry.latest[seat]
        return Earlier(version, body if latest_id == move_id else None)

    async def acquire(self, table_id: str, owner: str, lease_ms: int) -> str | None:
        holder = self._lease(table_id)
        if holder is not None and holder != owner:
            return holder
        self._set_lease(table_id, owner, lease_ms)
        return None

    async def renew(self, table_id: str, owner: str, lease_ms: int) -> bool:
        return (await self.renew_many([table_id], owner, lease_ms))[0]

    async def renew_many(self, table_ids: Sequence[str], owner: str, lease_ms: int) -> list[bool]:
        held = [self._lease(table_id) == owner for table_id in table_ids]
        for table_id, ours in zip(table_ids, held, strict=True):
            if ours:
                self._set_lease(table_id, owner, lease_ms)
        return held

    async def release(self, table_id: str, owner: str) -> None:
        if self._lease(table_id) == owner:
            del self._leases[table_id]
            if table_id in self._live:
                self._live[table_id] = time.monotonic()

    async def holder(self, table_id: str) -> str | None:
        return self._lease(table_id)

    async def finish(self, table_id: str, owner: str, state: TableState, ttl_ms: int) -> bool:
        entry = self._entry(table_id)
        if entry is None or self._lease(table_id) != owner:
            return False
        entry.state = state.to_json()
        entry.expires = time.monotonic() + ttl_ms / 1000
        self._set_lease(table_id, FINISHED, ttl_ms)
        self._live.pop(table_id, None)
        return True

    async def live_tables(self) -> list[str]:
        return sorted(self._live)

    async def note_leases(self, ages: Sequence[tuple[str, int]], lease_ms: int) -> None:
        now = time.monotonic()
        for table_id, age in ages:
            if table_id in self._live:
                self._live[table_id] = now + (lease_ms - age) / 1000

    async def expired_count(self) -> int:
        now = time.monotonic()
        return sum(expires <= now for expires in self._live.values())

    async def claim_expired(self, limit: int, claim_ms: int) -> list[str]:
        now = time.monotonic()
        expired = sorted((e, t) for t, e in self._live.items() if e <= now)[:limit]
        for _, table_id in expired:
            self._live[table_id] = now + claim_ms / 1000
        return [table_id for _, table_id in expired]

    async def forget(self, table_id: str) -> None:
        self._live.pop(table_id, None)
