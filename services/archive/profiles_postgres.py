"""The profile store on PostgreSQL: the record store's pool and outages (``postgres.py``),
with profiles' statements (``profiles_sql.py``).

A call that writes more than one row is one transaction. ``apply_result`` begins with
``INSERT … ON CONFLICT (table_id) DO NOTHING`` into ``applied_results``: of callers racing
on one table id, whatever their connections or processes, one inserts and the others wait
for its transaction, then insert nothing and return False (or, had it rolled back, one of
them applies the match instead). It then locks the match's profiles' rows in id order
(``FOR UPDATE``: two matches sharing players never deadlock) before reading their ratings.
"""

from __future__ import annotations

import time
from typing import Any

import psycopg
from psycopg.rows import TupleRow

import services.archive.profiles_sql as sql
from services.archive.postgres import PostgresRecords
from services.archive.profiles import (
    DailyEntry,
    HistoryEntry,
    LeaderboardEntry,
    MatchResult,
    Profile,
)
from services.profiles.keys import new_profile_id

__all__ = ["PostgresProfiles"]

Connection = psycopg.AsyncConnection[TupleRow]


def _wall_ms() -> int:
    return int(time.time() * 1000)


async def _execute(connection: Connection, statement: str, args: Any = ()) -> Any:
    return await connection.execute(sql.postgres(statement), args)


async def _apply(connection: Connection, result: MatchResult) -> bool:
    claimed = await _execute(connection, sql.CLAIM_RESULT, (result.table_id, _wall_ms()))
    if claimed.rowcount != 1:
        return False
    ids = sorted({seat.profile for seat in result.seats if seat.profile and not seat.bot})
    rows = []
    if ids:
        rows = await (
            await _execute(connection, sql.live_profiles(len(ids), lock=True), ids)
        ).fetchall()
    plan = sql.plan(result, {str(r[0]): (float(r[1]), float(r[2]), str(r[3])) for r in rows})
    async with connection.cursor() as cursor:
        if plan.played:
            await cursor.executemany(sql.postgres(sql.UPDATE_PLAYED), plan.played)
            await cursor.executemany(sql.postgres(sql.INSERT_HISTORY), plan.history)
        for profile_id in plan.profiles:
            await cursor.execute(
                sql.postgres(sql.PRUNE_HISTORY), (profile_id, profile_id, sql.HISTORY_KEPT)
            )
        if plan.daily:
            await cursor.executemany(sql.postgres(sql.FINISH_DAILY), plan.daily)
    return True


class PostgresProfiles(PostgresRecords):
    @classmethod
    async def open(
        cls, conninfo: str, *, pool_min: int = 1, pool_max: int = 4, timeout_ms: int = 5_000
    ) -> PostgresProfiles:
        """Open the pool; ``StoreUnavailable`` if no connection is made within the timeout."""
        opened = await super().open(
            conninfo, pool_min=pool_min, pool_max=pool_max, timeout_ms=timeout_ms
        )
        assert isinstance(opened, PostgresProfiles)
        return opened

    async def _one(self, statement: str, args: Any) -> Any:
        async with self._connection() as connection:
            return await (await _execute(connection, statement, args)).fetchone()

    async def _all(self, statement: str, args: Any) -> list[Any]:
        async with self._connection() as connection:
            rows: list[Any] = await (await _execute(connection, statement, args)).fetchall()
            return rows

    async def create_profile(self, name: str, key_hash: bytes, now_ms: int) -> Profile:
        async with self._connection() as connection, connection.transaction():
            while True:  # a new id (64 random bits: a second try is all but never needed)
                row = sql.new_profile(new_profile_id(), name, now_ms)
                if (await _execute(connection, sql.INSERT_PROFILE, row)).rowcount == 1:
                    break
            await _execute(connection, sql.INSERT_KEY, (key_hash, row[0], now_ms))
            found = await (await _execute(connection, sql.PROFILE, (row[0],))).fetchone()
        return sql.profile(found)

    async def profile_by_key(self, key_hash: bytes) -> Profile | None:
        row = await self._one(sql.PROFILE_BY_KEY, (key_hash,))
        return None if row is None else sql.profile(row)

    async def profile(self, profile_id: str) -> Profile | None:
        row = await self._one(sql.PROFILE, (profile_id,))
        return None if row is None else sql.profile(row)

    async def update_profile(
        self, profile_id: str, *, name: str | None = None, public: bool | None = None
    ) -> Profile | None:
        row = await self._one(sql.UPDATE_PROFILE, (name, public, profile_id))
        return None if row is None else sql.profile(row)

    async def add_key(self, profile_id: str, key_hash: bytes, now_ms: int) -> bool:
        async with self._connection() as connection, connection.transaction():
            found = await (await _execute(connection, sql.EXISTS, (profile_id,))).fetchone()
            if found is None:
                return False
            await _execute(connection, sql.INSERT_KEY, (key_hash, profile_id, now_ms))
            return True

    async def put_link_code(self, code_hash: bytes, profile_id: str, expires_ms: int) -> None:
        async with self._connection() as connection, connection.transaction():
            await _execute(connection, sql.DROP_EXPIRED_CODES, (_wall_ms(),))
            await _execute(connection, sql.INSERT_CODE, (code_hash, profile_id, expires_ms))

    async def take_link_code(self, code_hash: bytes, now_ms: int) -> str | None:
        row = await self._one(sql.TAKE_CODE, (code_hash,))
        if row is None or int(row[1]) <= now_ms:
            return None
        return str(row[0])

    async def forget(self, profile_id: str) -> bool:
        async with self._connection() as connection, connection.transaction():
            for statement in sql.FORGET:
                await _execute(connection, statement, (profile_id,))
            deleted = await _execute(connection, sql.DELETE_PROFILE, (profile_id,))
            return bool(deleted.rowcount == 1)

    async def apply_result(self, result: MatchResult) -> bool:
        async with self._connection() as connection, connection.transaction():
            return await _apply(connection, result)

    async def history(self, profile_id: str, limit: int = 50) -> list[HistoryEntry]:
        rows = await self._all(sql.HISTORY, (profile_id, limit))
        return [sql.history_entry(row) for row in rows]

    async def leaderboard(self, limit: int = 100) -> list[LeaderboardEntry]:
        rows = await self._all(sql.LEADERBOARD, (limit,))
        return [LeaderboardEntry(str(name), int(rating)) for name, rating in rows]

    async def start_daily(self, day: str, profile_id: str, now_ms: int) -> bool:
        async with self._connection() as connection:
            claimed = await _execute(connection, sql.START_DAILY, (day, now_ms, profile_id))
            return bool(claimed.rowcount == 1)

    async def cancel_daily(self, day: str, profile_id: str) -> None:
        async with self._connection() as connection:
            await _execute(connection, sql.CANCEL_DAILY, (day, profile_id))

    async def daily_entry(self, day: str, profile_id: str) -> DailyEntry | None:
        row = await self._one(sql.DAILY_ENTRY, (day, profile_id))
        return None if row is None else sql.daily_entry(row)

    async def daily_board(self, day: str, limit: int = 100) -> list[DailyEntry]:
        rows = await self._all(sql.DAILY_BOARD, (day, limit))
        return [sql.daily_entry(row) for row in rows]
