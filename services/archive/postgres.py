"""The record store on PostgreSQL: psycopg 3's asyncio connections, from a pool.

The pool (psycopg_pool) keeps ``DATABASE_POOL_MIN`` to ``DATABASE_POOL_MAX`` connections,
each checked before it is handed out (a database that restarted costs a reconnect, never
a failed call). Connections are in autocommit: every statement is one transaction.

``put_record`` is ``INSERT … ON CONFLICT (table_id) DO NOTHING``: of two writers racing on
one id, whatever their connections or processes, the primary key lets one row in and the
other waits for it, then does nothing (its row count says which one it was).

A database that does not answer (unreachable, restarting, shutting down, a pool without a
free connection in time, a call slower than the timeout) is ``StoreUnavailable``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
from psycopg import errors
from psycopg.rows import TupleRow
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from services.archive.codec import pack, unpack
from services.archive.records import MatchRecord
from services.common.errors import StoreUnavailable

__all__ = ["PostgresRecords"]

PURGE_BATCH = 1_000
Pool = AsyncConnectionPool[psycopg.AsyncConnection[TupleRow]]


def _wall_ms() -> int:
    return int(time.time() * 1000)


class PostgresRecords:
    def __init__(self, pool: Pool, timeout_s: float) -> None:
        self._pool = pool
        self._timeout_s = timeout_s

    @classmethod
    async def open(
        cls, conninfo: str, *, pool_min: int = 1, pool_max: int = 4, timeout_ms: int = 5_000
    ) -> PostgresRecords:
        """Open the pool; ``StoreUnavailable`` if no connection is made within the timeout."""
        timeout_s = timeout_ms / 1000
        pool: Pool = AsyncConnectionPool(
            conninfo,
            min_size=pool_min,
            max_size=max(pool_min, pool_max),
            open=False,
            name="archive",
            timeout=timeout_s,
            kwargs={"autocommit": True, "connect_timeout": max(1, round(timeout_s))},
            check=AsyncConnectionPool.check_connection,
        )
        try:
            await pool.open(wait=True, timeout=timeout_s)
        except PoolTimeout as exc:
            await pool.close()
            raise StoreUnavailable(type(exc).__name__) from exc
        except BaseException:
            await pool.close()
            raise
        return cls(pool, timeout_s)

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[psycopg.AsyncConnection[TupleRow]]:
        """A pooled connection, with the database's outages as ``StoreUnavailable``."""
        try:
            async with asyncio.timeout(self._timeout_s), self._pool.connection() as connection:
                yield connection
        except (psycopg.OperationalError, PoolTimeout, TimeoutError) as exc:
            raise StoreUnavailable(type(exc).__name__) from exc

    async def schema_revisions(self) -> tuple[str, ...]:
        async with self._connection() as connection:
            try:
                cursor = await connection.execute("SELECT version_num FROM alembic_version")
            except errors.UndefinedTable:
                return ()
            return tuple(str(row[0]) for row in await cursor.fetchall())

    async def put_record(self, record: MatchRecord) -> bool:
        encoding, data = pack(record.log_json)
        async with self._connection() as connection:
            cursor = await connection.execute(
                "INSERT INTO match_records (table_id, code, reason, finished_at_ms,"
                " archived_at_ms, encoding, log) VALUES (%s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (table_id) DO NOTHING",
                (
                    record.table_id,
                    record.code,
                    record.reason,
                    record.finished_at_ms,
                    _wall_ms(),
                    encoding,
                    data,
                ),
            )
            return cursor.rowcount == 1

    async def get_record(self, table_id: str) -> MatchRecord | None:
        async with self._connection() as connection:
            cursor = await connection.execute(
                "SELECT code, reason, finished_at_ms, encoding, log FROM match_records"
                " WHERE table_id = %s",
                (table_id,),
            )
            row = await cursor.fetchone()
        if row is None:
            return None
        code, reason, finished_at_ms, encoding, data = row
        return MatchRecord(table_id, code, reason, finished_at_ms, unpack(encoding, data))

    async def purge(self, finished_before_ms: int) -> int:
        deleted = 0
        while True:  # in batches: no statement holds many row locks for long
            async with self._connection() as connection:
                cursor = await connection.execute(
                    "DELETE FROM match_records WHERE table_id IN (SELECT table_id FROM"
                    " match_records WHERE finished_at_ms < %s LIMIT %s)",
                    (finished_before_ms, PURGE_BATCH),
                )
            deleted += cursor.rowcount
            if cursor.rowcount < PURGE_BATCH:
                return deleted

    async def ping(self) -> None:
        async with self._connection() as connection:
            await connection.execute("SELECT 1")

    async def close(self) -> None:
        await self._pool.close()
