"""The store in process memory, for ``rackem up`` without Redis (one matchmaker process).

Each method mirrors one Lua script of ``lua.py`` step by step, on the same field layout
(``records.py``). Methods never await in the middle of a change, so under asyncio each
is atomic. Keys expire like their Redis counterparts, by the wall clock.

Only tables still waiting or starting stay in the dicts. A started or closed table's
record, its code and its seat tokens no longer change (they are read: a seat resumed by
token, a rematch), so every sweep moves them into an ``Archive``
(services/common/archive.py; a file under ``rackem up``'s data directory) with their
expiries; a key not found in memory is looked up there and, if found, brought back
until the next sweep. Memory then holds the tables being filled, not every match played.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Sequence

from services.common.archive import Archive
from services.common.errors import ServiceError
from services.matchmaker.by_level import fits
from services.matchmaker.records import (
    NewTable,
    Placed,
    Sitter,
    TableRecord,
    Timings,
    new_fields,
)
from services.matchmaker.store import ReleaseMode

__all__ = ["MemoryStore"]

_SWEEP_EVERY_MS = 10_000
_DONE = ("started", "closed")  # a record in either status no longer changes


def _wall_ms() -> int:
    return int(time.time() * 1000)


class MemoryStore:
    def __init__(self, clock: Callable[[], int] = _wall_ms, archive: Archive | None = None) -> None:
        self._clock = clock
        self._archive = archive if archive is not None else Archive(clock=clock)
        self._tables: dict[str, dict[str, str]] = {}
        self._queues: dict[str, dict[str, int]] = {}  # players → table id → created
        self._due: dict[str, int] = {}  # table id → when
        self._codes: dict[str, str] = {}
        self._tokens: dict[str, str] = {}  # token hash → "table-id seat"
        self._rematches: dict[str, str] = {}  # old table id → its rematch's id
        self._expiry: dict[tuple[str, str], int] = {}
        self._subscribers: set[asyncio.Queue[str]] = set()
        self._swept = 0

    # -- keyspace with expiry -------------------------------------------------------------

    def _space(self, kind: str) -> dict[str, dict[str, str]] | dict[str, str]:
        if kind == "t":
            return self._tables
        if kind == "rm":
            return self._rematches
        return self._codes if kind == "code" else self._tokens

    def _alive(self, kind: str, key: str) -> bool:
        expires = self._expiry.get((kind, key))
        if expires is not None and expires <= self._clock():
            self._space(kind).pop(key, None)
            del self._expiry[(kind, key)]
            self._archive.delete(kind, key)
        return key in self._space(kind) or self._unarchive(kind, key)

    def _unarchive(self, kind: str, key: str) -> bool:
        """Bring ``kind:key`` back from the archive, if it is there (until the next sweep)."""
        found = self._archive.get(kind, key) if kind in ("t", "tok", "code") else None
        if found is None:
            return False
        value, expires = found
        if kind == "t":
            self._tables[key] = json.loads(value)
        else:
            self._space_of_text(kind)[key] = value
        if expires is not None:
            self._expiry[(kind, key)] = expires
        return True

    def _space_of_text(self, kind: str) -> dict[str, str]:
        return self._codes if kind == "code" else self._tokens

    def archive_done(self) -> int:
        """Move every started or closed table (record, code, seat tokens) to the archive;
        how many tables moved."""
        done = [(i, f) for i, f in self._tables.items() if f["status"] in _DONE]
        rows: list[tuple[str, str, str, int | None]] = []
        for table_id, fields in done:
            rows.append(("t", table_id, json.dumps(fields), self._expiry.get(("t", table_id))))
            keys = [("t", table_id)]
            code = fields["code"]
            if self._codes.get(code) == table_id:
                keys.append(("code", code))
            for seat in range(int(fields["players"])):
                token_hash = fields.get(f"k{seat}", "")
                if self._tokens.get(token_hash) == f"{table_id} {seat}":
                    keys.append(("tok", token_hash))
            for kind, key in keys[1:]:
                value = self._space_of_text(kind)[key]
                rows.append((kind, key, value, self._expiry.get((kind, key))))
            for kind, key in keys:
                self._space(kind).pop(key, None)
                self._expiry.pop((kind, key), None)
        if rows:
            self._archive.put_many(rows)
        return len(done)

    def _expire(self, kind: str, key: str, ttl_ms: int) -> None:
        if key in self._space(kind):
            self._expiry[(kind, key)] = self._clock() + ttl_ms

    def _delete(self, kind: str, key: str) -> None:
        self._space(kind).pop(key, None)
        self._expiry.pop((kind, key), None)
        self._archive.delete(kind, key)

    def _sweep(self) -> None:
        now = self._clock()
        if now - self._swept < _SWEEP_EVERY_MS:
            return
        self._swept = now
        for kind, key in [k for k, expires in self._expiry.items() if expires <= now]:
            self._alive(kind, key)
        self.archive_done()

    def _record(self, table_id: str) -> TableRecord:
        return TableRecord.from_fields(self._tables[table_id])

    def _table(self, table_id: str) -> dict[str, str] | None:
        return self._tables[table_id] if self._alive("t", table_id) else None

    # -- helpers the scripts share ----------------------------------------------------------

    def _bump(self, table_id: str) -> None:
        fields = self._tables[table_id]
        fields["ver"] = str(int(fields["ver"]) + 1)
        for queue in self._subscribers:
            queue.put_nowait(table_id)

    @staticmethod
    def _free_seat(fields: dict[str, str]) -> int:
        for i in range(int(fields["players"])):
            if not fields.get(f"n{i}"):
                return i
        return -1

    def _seat_token(self, token_hash: str, table_id: str, seat: int, ttl_ms: int) -> None:
        self._tokens[token_hash] = f"{table_id} {seat}"
        self._expire("tok", token_hash, ttl_ms)

    def _take(self, table_id: str, owner: str, now_ms: int, claim_ms: int) -> None:
        fields = self._tables[table_id]
        fields["status"] = "starting"
        fields["owner"] = owner
        self._due[table_id] = now_ms + claim_ms
        self._queues.get(fields["players"], {}).pop(table_id, None)

    def _close(self, table_id: str, done_ttl_ms: int) -> None:
        fields = self._tables[table_id]
        fields["status"] = "closed"
        fields["owner"] = ""
        self._due.pop(table_id, None)
        self._queues.get(fields["players"], {}).pop(table_id, None)
        if self._alive("code", fields["code"]) and self._codes[fields["code"]] == table_id:
            self._delete("code", fields["code"])
        self._expire("t", table_id, done_ttl_ms)
        self._bump(table_id)

    def _open(
        self, table: NewTable, sitter: Sitter, now_ms: int, deadline_ms: int, ttl_ms: int
    ) -> bool:
        if self._alive("code", table.code):
            return False
        self._codes[table.code] = table.id
        self._expire("code", table.code, ttl_ms)
        self._tables[table.id] = new_fields(table, sitter, now_ms, deadline_ms)
        self._expire("t", table.id, ttl_ms)
        return True

    # -- the store interface ---------------------------------------------------------------

    async def quick_join(
        self, table: NewTable, sitter: Sitter, now_ms: int, timings: Timings, owner: str
    ) -> Placed | None:
        players = str(table.rules.players)
        queue = self._queues.setdefault(players, {})
        for table_id in sorted(queue, key=lambda i: (queue[i], i)):
            fields = self._table(table_id)
            seat = -1
            if fields is not None and fields["status"] == "waiting":
                seat = self._free_seat(fields)
            if fields is None or seat < 0:
                del queue[table_id]
                continue
            level = TableRecord.from_fields(fields).mean_rating
            rating = sitter.rating if sitter.profile else None
            if not fits(level, rating, now_ms - int(fields["created"]), timings):
                continue
            humans = int(fields["humans"]) + 1
            deadline = int(fields["deadline"])
            if humans == 2 and now_ms + timings.fill_ms < deadline:
                deadline = now_ms + timings.fill_ms
            fields.update(
                {
                    f"n{seat}": sitter.name,
                    f"k{seat}": sitter.token_hash,
                    f"p{seat}": sitter.profile,
                    f"r{seat}": str(sitter.rating),
                    "humans": str(humans),
                    "deadline": str(deadline),
                }
            )
            start = self._free_seat(fields) < 0
            if start:
                self._take(table_id, owner, now_ms, timings.claim_ms)
            else:
                self._due[table_id] = deadline
            self._seat_token(sitter.token_hash, table_id, seat, timings.token_ttl_ms)
            self._bump(table_id)
            return Placed(table_id, seat, start, TableRecord.from_fields(fields))
        deadline = now_ms + timings.fill_lone_ms
        if not self._open(table, sitter, now_ms, deadline, timings.lobby_ttl_ms):
            return None
        queue[table.id] = now_ms
        self._due[table.id] = deadline
        self._seat_token(sitter.token_hash, table.id, 0, timings.token_ttl_ms)
        self._bump(table.id)
        return Placed(table.id, 0, False, self._record(table.id))

    async def create_private(
        self, table: NewTable, sitter: Sitter, now_ms: int, timings: Timings, owner: str | None
    ) -> Placed | None:
        if not self._open(table, sitter, now_ms, 0, timings.lobby_ttl_ms):
            return None
        self._seat_token(sitter.token_hash, table.id, 0, timings.token_ttl_ms)
        if owner is not None:
            self._take(table.id, owner, now_ms, timings.claim_ms)
        self._bump(table.id)
        return Placed(table.id, 0, owner is not None, self._record(table.id))

    async def rematch(
        self,
        old_id: str,
        table: NewTable,
        seats: Sequence[tuple[str, bool]],
        seat: int,
        sitter: Sitter,
        now_ms: int,
        timings: Timings,
        owner: str,
    ) -> Placed | None:
        table_id = self._rematches.get(old_id) if self._alive("rm", old_id) else None
        if table_id is None or self._table(table_id) is None:
            ttl = timings.lobby_ttl_ms
            if self._alive("code", table.code):
                return None
            self._codes[table.code] = table.id
            self._expire("code", table.code, ttl)
            deadline = now_ms + timings.rematch_ms
            fields = {
                **new_fields(table, Sitter("", ""), now_ms, deadline),
                "creator": "-1",
                "humans": "0",
            }
            for i, (name, bot) in enumerate(seats):
                fields[f"n{i}"] = name
                fields.pop(f"k{i}", None)
                if bot:
                    fields[f"b{i}"] = "1"
            self._tables[table.id] = fields
            self._expire("t", table.id, ttl)
            self._rematches[old_id] = table_id = table.id
            self._expire("rm", old_id, ttl)
            self._due[table.id] = deadline
            for queue in self._subscribers:
                queue.put_nowait(old_id)
        fields = self._tables[table_id]
        if fields["status"] == "closed":
            raise ServiceError("no_rematch", "the rematch was called off")
        if fields["status"] != "waiting":
            raise ServiceError("already_started", "the table has already started")
        old = fields.get(f"k{seat}", "")
        if old:
            self._delete("tok", old)
        else:
            fields["humans"] = str(int(fields["humans"]) + 1)
        fields[f"n{seat}"] = sitter.name
        fields[f"k{seat}"] = sitter.token_hash
        fields[f"p{seat}"] = sitter.profile
        fields[f"r{seat}"] = str(sitter.rating)
        self._seat_token(sitter.token_hash, table_id, seat, timings.token_ttl_ms)
        players = int(fields["players"])
        start = all(fields.get(f"b{i}") == "1" or fields.get(f"k{i}") for i in range(players))
        if start:
            self._take(table_id, owner, now_ms, timings.claim_ms)
        self._bump(table_id)
        return Placed(table_id, seat, start, self._record(table_id))

    async def rematch_of(self, old_id: str) -> str | None:
        return self._rematches.get(old_id) if self._alive("rm", old_id) else None

    async def join_code(
        self, code: str, sitter: Sitter, now_ms: int, timings: Timings, owner: str
    ) -> Placed:
        if not self._alive("code", code):
            raise ServiceError("no_code", "no waiting table has that code")
        table_id = self._codes[code]
        fields = self._table(table_id)
        if fields is None or fields["pub"] != "0" or fields["status"] == "closed":
            raise ServiceError("no_code", "no waiting table has that code")
        if fields["status"] != "waiting":
            raise ServiceError("already_started", "the table has already started")
        seat = self._free_seat(fields)
        if seat < 0:
            raise ServiceError("table_full", "the table has no free seat")
        fields.update(
            {
                f"n{seat}": sitter.name,
                f"k{seat}": sitter.token_hash,
                f"p{seat}": sitter.profile,
                f"r{seat}": str(sitter.rating),
                "humans": str(int(fields["humans"]) + 1),
            }
        )
        self._expire("t", table_id, timings.lobby_ttl_ms)
        self._expire("code", code, timings.lobby_ttl_ms)
        self._seat_token(sitter.token_hash, table_id, seat, timings.token_ttl_ms)
        start = self._free_seat(fields) < 0
        if start:
            self._take(table_id, owner, now_ms, timings.claim_ms)
        self._bump(table_id)
        return Placed(table_id, seat, start, TableRecord.from_fields(fields))

    async def leave(self, token_hash: str, now_ms: int, timings: Timings) -> TableRecord:
        if not self._alive("tok", token_hash):
            raise ServiceError("bad_token", "unknown or expired seat token")
        table_id, seat_text = self._tokens[token_hash].split(" ")
        fields = self._table(table_id)
        if fields is None:
            raise ServiceError("bad_token", "unknown or expired seat token")
        if fields["status"] == "closed":
            self._delete("tok", token_hash)
            return self._record(table_id)
        if fields["status"] != "waiting":
            raise ServiceError("already_started", "the table has already started")
        self._delete("tok", token_hash)
        humans = int(fields["humans"]) - 1
        if fields["creator"] == seat_text or humans <= 0:
            self._close(table_id, timings.done_ttl_ms)
            return self._record(table_id)
        fields.update(
            {
                f"n{seat_text}": "",
                f"k{seat_text}": "",
                f"p{seat_text}": "",
                f"r{seat_text}": "0",
                "humans": str(humans),
            }
        )
        if fields["pub"] == "1":
            self._queues.setdefault(fields["players"], {})[table_id] = int(fields["created"])
            self._due[table_id] = int(fields["deadline"])
        else:
            self._due.pop(table_id, None)
        self._bump(table_id)
        return self._record(table_id)

    async def claim(self, table_id: str, owner: str, now_ms: int, timings: Timings) -> bool:
        fields = self._table(table_id)
        if fields is None or fields["status"] != "waiting":
            return False
        self._take(table_id, owner, now_ms, timings.claim_ms)
        return True

    async def claim_due(self, owner: str, now_ms: int, limit: int, timings: Timings) -> list[str]:
        self._sweep()
        ready = sorted((when, i) for i, when in self._due.items() if when <= now_ms)[:limit]
        out = []
        for _, table_id in ready:
            fields = self._table(table_id)
            if fields is not None and fields["status"] in ("waiting", "starting"):
                self._take(table_id, owner, now_ms, timings.claim_ms)
                out.append(table_id)
            else:
                del self._due[table_id]
        return out

    async def finish(
        self,
        table_id: str,
        owner: str,
        replica: str,
        bots: Sequence[tuple[int, str]],
        timings: Timings,
    ) -> TableRecord | None:
        fields = self._table(table_id)
        if fields is None or fields["status"] != "starting" or fields["owner"] != owner:
            return None
        fields.update({"status": "started", "replica": replica, "owner": ""})
        for seat, name in bots:
            fields[f"n{seat}"] = name
            fields[f"b{seat}"] = "1"
        self._due.pop(table_id, None)
        self._expire("t", table_id, timings.done_ttl_ms)
        code = fields["code"]
        if self._alive("code", code) and self._codes[code] == table_id:
            self._expire("code", code, timings.done_ttl_ms)
        self._bump(table_id)
        return self._record(table_id)

    async def release(
        self, table_id: str, owner: str, now_ms: int, mode: ReleaseMode, timings: Timings
    ) -> str:
        fields = self._table(table_id)
        if fields is None or fields["status"] != "starting" or fields["owner"] != owner:
            return "lost"
        attempts = int(fields["attempts"]) + 1
        fields["attempts"] = str(attempts)
        if mode == "close" or (mode == "retry" and attempts >= timings.max_attempts):
            self._close(table_id, timings.done_ttl_ms)
            return "closed"
        fields.update({"status": "waiting", "owner": ""})
        if mode == "retry":
            self._due[table_id] = now_ms + timings.retry_ms
        else:
            self._due.pop(table_id, None)
        if fields["pub"] == "1" and int(fields["humans"]) < int(fields["players"]):
            self._queues.setdefault(fields["players"], {})[table_id] = int(fields["created"])
        return "waiting"

    async def table(self, table_id: str) -> TableRecord | None:
        fields = self._table(table_id)
        return None if fields is None else TableRecord.from_fields(fields)

    async def seat_of(self, token_hash: str) -> tuple[str, int] | None:
        if not self._alive("tok", token_hash):
            return None
        table_id, seat = self._tokens[token_hash].split(" ")
        return table_id, int(seat)

    async def table_by_code(self, code: str) -> str | None:
        return self._codes[code] if self._alive("code", code) else None

    async def changes(self) -> AsyncIterator[str]:
        queue: asyncio.Queue[str] = asyncio.Queue()
        self._subscribers.add(queue)
        try:
            yield ""
            while True:
                yield await queue.get()
        finally:
            self._subscribers.discard(queue)

    async def close(self) -> None:
        """Archive what is done (so a restart on the same file still finds it) and close."""
        self._subscribers.clear()
        self.archive_done()
        self._archive.close()
