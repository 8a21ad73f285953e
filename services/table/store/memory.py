"""The in-process table store (``rackem up`` without Redis): the Redis store's semantics in dicts.

Values are kept as the same JSON text Redis holds, so nothing a caller keeps can
alias what is stored. Leases and the lease index use a monotonic clock.

Only live tables stay in the dicts: ``finish`` moves a table's meta, log, state and move
replies into an ``Archive`` (services/common/archive.py; a file under ``rackem up``'s
data directory) and drops it from memory, so memory holds what is being played, not
every match played; a finished table reads back from there, its lease ``FINISHED``,
until its TTL (a wall-clock expiry, kept across restarts). With an archive
(``finish(..., archive_after_ms=…)``) it is also listed pending, in memory, until
``drop_archived`` deletes it from there.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from services.common.archive import Archive
from services.table.store import AppendResult, Complaint, Expired, Pending
from services.table.store.lease_index import FINISHED
from services.table.store.lua import COMPLAINED
from services.table.stored import Reply, StoredTable, TableMeta, TableState

__all__ = ["MemoryStore"]

_FINISHED = "finished"  # the archive's kind for finished tables


@dataclass(slots=True)
class _Entry:
    meta: str
    state: str
    log: list[str] = field(default_factory=list)
    versions: dict[tuple[int, str], int] = field(default_factory=dict)

    def archived(self) -> str:
        """The entry as one JSON text, for the archive."""
        replies = [[seat, move_id, version] for (seat, move_id), version in self.versions.items()]
        return orjson.dumps(
            {"meta": self.meta, "state": self.state, "log": self.log, "replies": replies}
        ).decode()

    @classmethod
    def from_archive(cls, text: str) -> _Entry:
        data = orjson.loads(text)  # (an older archive's "latest" replies are not read)
        return cls(
            data["meta"],
            data["state"],
            data["log"],
            {(seat, move_id): version for seat, move_id, version in data["replies"]},
        )


class MemoryStore:
    def __init__(self, archive: Archive | None = None) -> None:
        self._tables: dict[str, _Entry] = {}  # live tables only
        self._leases: dict[str, tuple[str, float]] = {}
        self._live: dict[str, float] = {}  # the lease index: id -> when its lease expires
        # Complaints: id -> (the owner complained of, since when, until when, revoked).
        self._complaints: dict[str, tuple[str, float, float, bool]] = {}
        # The pending index: id -> (when a sweeper may take it, when it finished, unix ms).
        self._pending: dict[str, tuple[float, int]] = {}
        self._archive = archive if archive is not None else Archive()

    def _entry(self, table_id: str) -> _Entry | None:
        return self._tables.get(table_id)

    def _finished(self, table_id: str) -> _Entry | None:
        found = self._archive.get(_FINISHED, table_id)
        return None if found is None else _Entry.from_archive(found[0])

    def _is_finished(self, table_id: str) -> bool:
        return self._archive.get(_FINISHED, table_id) is not None

    def _lease(self, table_id: str) -> str | None:
        held = self._leases.get(table_id)
        if held is None:
            return (
                FINISHED if table_id not in self._tables and self._is_finished(table_id) else None
            )
        if held[1] <= time.monotonic():
            del self._leases[table_id]
            return None
        return held[0]

    def _set_lease(self, table_id: str, owner: str, lease_ms: int) -> None:
        self._leases[table_id] = (owner, time.monotonic() + lease_ms / 1000)

    async def create(self, meta: TableMeta, state: TableState, owner: str, lease_ms: int) -> bool:
        if self._entry(meta.table_id) is not None or self._is_finished(meta.table_id):
            return False
        self._tables[meta.table_id] = _Entry(meta.to_json(), state.to_json())
        self._set_lease(meta.table_id, owner, lease_ms)
        self._live[meta.table_id] = time.monotonic() + lease_ms / 1000
        return True

    async def load(self, table_id: str) -> StoredTable | None:
        entry = self._entry(table_id) or self._finished(table_id)
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

    async def reply(self, table_id: str, seat: int, move_id: str) -> int | None:
        entry = self._entry(table_id) or self._finished(table_id)
        return None if entry is None else entry.versions.get((seat, move_id))

    async def acquire(self, table_id: str, owner: str, lease_ms: int) -> str | None:
        holder = self._lease(table_id)
        if holder is not None and holder != owner:
            return holder
        complaint = self._complaint(table_id)
        if complaint is not None and complaint[3] and complaint[0] == owner:
            return COMPLAINED
        self._set_lease(table_id, owner, lease_ms)
        return None

    def _complaint(self, table_id: str) -> tuple[str, float, float, bool] | None:
        complaint = self._complaints.get(table_id)
        if complaint is not None and complaint[2] <= time.monotonic():
            del self._complaints[table_id]
            return None
        return complaint

    async def complain(
        self, table_id: str, owner: str, hold_ms: int, window_ms: int, cooldown_ms: int
    ) -> Complaint:
        if self._lease(table_id) != owner:
            return "moved"
        complaint = self._complaint(table_id)
        if complaint is not None and complaint[3]:
            return "cooling"
        now = time.monotonic()
        since = complaint[1] if complaint is not None and complaint[0] == owner else now
        if (now - since) * 1000 >= hold_ms:
            del self._leases[table_id]
            self._complaints[table_id] = (owner, since, now + cooldown_ms / 1000, True)
            return "revoked"
        self._complaints[table_id] = (owner, since, now + window_ms / 1000, False)
        return "noted"

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

    async def finish(
        self,
        table_id: str,
        owner: str,
        state: TableState,
        ttl_ms: int,
        archive_after_ms: int | None = None,
    ) -> bool:
        entry = self._entry(table_id)
        if entry is None or self._lease(table_id) != owner:
            return False
        entry.state = state.to_json()
        expires = int(time.time() * 1000) + ttl_ms
        self._archive.put(_FINISHED, table_id, entry.archived(), expires)
        del self._tables[table_id]
        self._leases.pop(table_id, None)  # the archive's entry is the FINISHED lease now
        self._complaints.pop(table_id, None)
        if archive_after_ms is not None:
            await self.add_pending(table_id, archive_after_ms)
        self._live.pop(table_id, None)
        return True

    async def add_pending(self, table_id: str, delay_ms: int) -> None:
        if table_id not in self._pending:
            due = time.monotonic() + delay_ms / 1000
            self._pending[table_id] = (due, int(time.time() * 1000))

    async def pending_count(self) -> int:
        return len(self._pending)

    async def claim_pending(self, limit: int, claim_ms: int) -> list[Pending]:
        now = time.monotonic()
        due = sorted((d, t) for t, (d, _) in self._pending.items() if d <= now)[:limit]
        claimed = []
        for _, table_id in due:
            finished_at = self._pending[table_id][1]
            self._pending[table_id] = (now + claim_ms / 1000, finished_at)
            claimed.append(Pending(table_id, finished_at))
        return claimed

    async def drop_archived(self, table_id: str) -> bool:
        dropped = table_id not in self._tables and self._is_finished(table_id)
        if dropped:
            self._archive.delete(_FINISHED, table_id)
        self._pending.pop(table_id, None)
        return dropped

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

    async def claim_expired(self, limit: int, claim_ms: int) -> list[Expired]:
        now = time.monotonic()
        expired = sorted((e, t) for t, e in self._live.items() if e <= now)[:limit]
        for _, table_id in expired:
            self._live[table_id] = now + claim_ms / 1000
        return [Expired(table_id, int((now - e) * 1000)) for e, table_id in expired]

    async def lease_overdue_ms(self, table_id: str) -> int | None:
        expires = self._live.get(table_id)
        now = time.monotonic()
        return None if expires is None else max(0, int((now - expires) * 1000))

    async def forget(self, table_id: str) -> None:
        self._live.pop(table_id, None)
