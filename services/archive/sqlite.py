"""The record store on SQLite (standard library): one file, for ``rackem up`` and one process.

One connection, used from one worker thread of its own, so a write's fsync never stalls
the event loop, and calls keep their order. WAL, and ``synchronous=FULL``: a record is
written once, and may be the only copy of its match once the live store lets it go.
The file must exist and carry the schema (``rackem migrate``); opening never makes it.

Apart from ``services/common/archive.py``, on purpose: that is the in-process stores'
overflow of what they hold (rows replaced, each with its own expiry, its table made at
open), where this is the record tier — written once, kept for good or a retention, its
schema under migrations that PostgreSQL shares.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

from services.archive.codec import pack, unpack
from services.archive.records import MatchRecord
from services.common.errors import StoreUnavailable

__all__ = ["SqliteRecords"]

T = TypeVar("T")
PURGE_BATCH = 1_000
_BUSY = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}


def _wall_ms() -> int:
    return int(time.time() * 1000)


def _connect(path: str, timeout_s: float) -> sqlite3.Connection:
    if not Path(path).exists():
        raise FileNotFoundError(path)
    uri = f"file:{quote(str(Path(path).resolve()))}?mode=rw"
    db = sqlite3.connect(
        uri, uri=True, timeout=timeout_s, isolation_level=None, check_same_thread=False
    )
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    return db


class SqliteRecords:
    def __init__(self, db: sqlite3.Connection, worker: ThreadPoolExecutor) -> None:
        self._db = db
        self._worker = worker

    @classmethod
    async def open(cls, path: str, timeout_ms: int = 5_000) -> SqliteRecords:
        """Open the archive file at ``path``; ``FileNotFoundError`` if there is none."""
        worker = ThreadPoolExecutor(1, thread_name_prefix="archive-sqlite")
        try:
            loop = asyncio.get_running_loop()
            db = await loop.run_in_executor(worker, _connect, path, timeout_ms / 1000)
        except BaseException:
            worker.shutdown(wait=False)
            raise
        return cls(db, worker)

    async def _run(self, call: Callable[[], T]) -> T:
        try:
            return await asyncio.get_running_loop().run_in_executor(self._worker, call)
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode in _BUSY:  # another process held the lock past the timeout
                raise StoreUnavailable(type(exc).__name__) from exc
            raise

    async def schema_revisions(self) -> tuple[str, ...]:
        def read() -> tuple[str, ...]:
            try:
                rows = self._db.execute("SELECT version_num FROM alembic_version").fetchall()
            except sqlite3.OperationalError as exc:
                if "no such table" in str(exc):
                    return ()
                raise
            return tuple(str(row[0]) for row in rows)

        return await self._run(read)

    async def put_record(self, record: MatchRecord) -> bool:
        encoding, data = pack(record.log_json)
        row = (
            record.table_id,
            record.code,
            record.reason,
            record.finished_at_ms,
            _wall_ms(),
            encoding,
            data,
        )

        def put() -> bool:
            cursor = self._db.execute(
                "INSERT INTO match_records (table_id, code, reason, finished_at_ms,"
                " archived_at_ms, encoding, log) VALUES (?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (table_id) DO NOTHING",
                row,
            )
            return cursor.rowcount == 1

        return await self._run(put)

    async def get_record(self, table_id: str) -> MatchRecord | None:
        def get() -> tuple[str, str, int, str, bytes] | None:
            found: tuple[str, str, int, str, bytes] | None = self._db.execute(
                "SELECT code, reason, finished_at_ms, encoding, log FROM match_records"
                " WHERE table_id = ?",
                (table_id,),
            ).fetchone()
            return found

        row = await self._run(get)
        if row is None:
            return None
        code, reason, finished_at_ms, encoding, data = row
        return MatchRecord(table_id, code, reason, finished_at_ms, unpack(encoding, data))

    async def purge(self, finished_before_ms: int) -> int:
        def purge() -> int:
            deleted = 0
            while True:  # in batches: the write lock is never held for long
                count = self._db.execute(
                    "DELETE FROM match_records WHERE table_id IN (SELECT table_id FROM"
                    " match_records WHERE finished_at_ms < ? LIMIT ?)",
                    (finished_before_ms, PURGE_BATCH),
                ).rowcount
                deleted += count
                if count < PURGE_BATCH:
                    return deleted

        return await self._run(purge)

    async def ping(self) -> None:
        await self._run(lambda: self._db.execute("SELECT 1").fetchone())

    async def close(self) -> None:
        await self._run(self._db.close)
        self._worker.shutdown(wait=True)
