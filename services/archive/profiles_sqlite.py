"""The profile store on SQLite: the record store's connection (``sqlite.py``), its worker
thread and its outages, with profiles' statements (``profiles_sql.py``).

A call that writes more than one row is one transaction begun ``IMMEDIATE``: it holds
the file's write lock from its start, so callers on other connections or processes
(the table service's archiver and the gateway under ``rackem up``) take turns, and
``apply_result``'s ``applied_results`` row decides which of them applies a match. Foreign
keys are enforced on this connection (``ON DELETE CASCADE`` under ``forget``'s deletes).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import Any, TypeVar

import services.archive.profiles_sql as sql
from services.archive.profiles import (
    DailyEntry,
    HistoryEntry,
    LeaderboardEntry,
    MatchResult,
    Profile,
)
from services.archive.sqlite import SqliteRecords
from services.profiles.keys import new_profile_id

__all__ = ["SqliteProfiles"]

T = TypeVar("T")


def _wall_ms() -> int:
    return int(time.time() * 1000)


def _first(cursor: sqlite3.Cursor) -> Any:
    """The first row of a statement with ``RETURNING``, run to its end (before COMMIT)."""
    rows = cursor.fetchall()
    return rows[0] if rows else None


def _transaction(db: sqlite3.Connection, work: Callable[[sqlite3.Connection], T]) -> T:
    db.execute("BEGIN IMMEDIATE")
    try:
        done = work(db)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return done


def _apply(db: sqlite3.Connection, result: MatchResult) -> bool:
    if db.execute(sql.CLAIM_RESULT, (result.table_id, _wall_ms())).rowcount != 1:
        return False
    ids = sorted({seat.profile for seat in result.seats if seat.profile and not seat.bot})
    rows = db.execute(sql.live_profiles(len(ids), lock=False), ids).fetchall() if ids else []
    plan = sql.plan(result, {str(r[0]): (float(r[1]), float(r[2]), str(r[3])) for r in rows})
    db.executemany(sql.UPDATE_PLAYED, plan.played)
    db.executemany(sql.INSERT_HISTORY, plan.history)
    for profile_id in plan.profiles:
        db.execute(sql.PRUNE_HISTORY, (profile_id, profile_id, sql.HISTORY_KEPT))
    db.executemany(sql.FINISH_DAILY, plan.daily)
    return True


class SqliteProfiles(SqliteRecords):
    @classmethod
    async def open(cls, path: str, timeout_ms: int = 5_000) -> SqliteProfiles:
        """Open the archive file at ``path``; ``FileNotFoundError`` if there is none."""
        opened = await super().open(path, timeout_ms)
        assert isinstance(opened, SqliteProfiles)
        await opened._run(lambda: opened._db.execute("PRAGMA foreign_keys=ON"))
        return opened

    async def _one(self, statement: str, args: tuple[Any, ...]) -> Any:
        return await self._run(lambda: self._db.execute(statement, args).fetchone())

    async def _write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        return await self._run(lambda: _transaction(self._db, work))

    async def create_profile(self, name: str, key_hash: bytes, now_ms: int) -> Profile:
        def create(db: sqlite3.Connection) -> Profile:
            while True:  # a new id (64 random bits: a second try is all but never needed)
                row = sql.new_profile(new_profile_id(), name, now_ms)
                if db.execute(sql.INSERT_PROFILE, row).rowcount == 1:
                    break
            db.execute(sql.INSERT_KEY, (key_hash, row[0], now_ms))
            return sql.profile(db.execute(sql.PROFILE, (row[0],)).fetchone())

        return await self._write(create)

    async def profile_by_key(self, key_hash: bytes) -> Profile | None:
        row = await self._one(sql.PROFILE_BY_KEY, (key_hash,))
        return None if row is None else sql.profile(row)

    async def profile(self, profile_id: str) -> Profile | None:
        row = await self._one(sql.PROFILE, (profile_id,))
        return None if row is None else sql.profile(row)

    async def update_profile(
        self, profile_id: str, *, name: str | None = None, public: bool | None = None
    ) -> Profile | None:
        row = await self._write(
            lambda db: _first(db.execute(sql.UPDATE_PROFILE, (name, public, profile_id)))
        )
        return None if row is None else sql.profile(row)

    async def add_key(self, profile_id: str, key_hash: bytes, now_ms: int) -> bool:
        def add(db: sqlite3.Connection) -> bool:
            if db.execute(sql.EXISTS, (profile_id,)).fetchone() is None:
                return False
            db.execute(sql.INSERT_KEY, (key_hash, profile_id, now_ms))
            return True

        return await self._write(add)

    async def put_link_code(self, code_hash: bytes, profile_id: str, expires_ms: int) -> None:
        def put(db: sqlite3.Connection) -> None:
            db.execute(sql.DROP_EXPIRED_CODES, (_wall_ms(),))
            db.execute(sql.INSERT_CODE, (code_hash, profile_id, expires_ms))

        await self._write(put)

    async def take_link_code(self, code_hash: bytes, now_ms: int) -> str | None:
        row = await self._write(lambda db: _first(db.execute(sql.TAKE_CODE, (code_hash,))))
        if row is None or int(row[1]) <= now_ms:
            return None
        return str(row[0])

    async def forget(self, profile_id: str) -> bool:
        def forget(db: sqlite3.Connection) -> bool:
            for statement in sql.FORGET:
                db.execute(statement, (profile_id,))
            return db.execute(sql.DELETE_PROFILE, (profile_id,)).rowcount == 1

        return await self._write(forget)

    async def apply_result(self, result: MatchResult) -> bool:
        return await self._write(lambda db: _apply(db, result))

    async def history(self, profile_id: str, limit: int = 50) -> list[HistoryEntry]:
        rows = await self._run(
            lambda: self._db.execute(sql.HISTORY, (profile_id, limit)).fetchall()
        )
        return [sql.history_entry(row) for row in rows]

    async def leaderboard(self, limit: int = 100) -> list[LeaderboardEntry]:
        rows = await self._run(lambda: self._db.execute(sql.LEADERBOARD, (limit,)).fetchall())
        return [LeaderboardEntry(str(name), int(rating)) for name, rating in rows]

    async def start_daily(self, day: str, profile_id: str, now_ms: int) -> bool:
        count = await self._write(
            lambda db: db.execute(sql.START_DAILY, (day, now_ms, profile_id)).rowcount
        )
        return bool(count == 1)

    async def cancel_daily(self, day: str, profile_id: str) -> None:
        await self._write(lambda db: db.execute(sql.CANCEL_DAILY, (day, profile_id)))

    async def daily_entry(self, day: str, profile_id: str) -> DailyEntry | None:
        row = await self._one(sql.DAILY_ENTRY, (day, profile_id))
        return None if row is None else sql.daily_entry(row)

    async def daily_board(self, day: str, limit: int = 100) -> list[DailyEntry]:
        rows = await self._run(lambda: self._db.execute(sql.DAILY_BOARD, (day, limit)).fetchall())
        return [sql.daily_entry(row) for row in rows]
