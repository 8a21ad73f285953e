"""PostgreSQL away: ``StoreUnavailable``, never a bug; back: served again without a restart."""

from __future__ import annotations

import asyncio
import time

import pytest
from postgres_engine import Postgres
from redis_engines import free_port

from services.archive import ArchiveSettings, MatchRecord, RecordStore, migrate, open_records
from services.archive.settings import parse_database_url
from services.common.errors import StoreUnavailable


async def _until_served(store: RecordStore, within_s: float = 30) -> float:
    start = time.monotonic()
    while True:
        try:
            await store.ping()
            return time.monotonic() - start
        except StoreUnavailable:
            if time.monotonic() - start > within_s:
                raise
            await asyncio.sleep(0.2)


async def test_a_database_that_does_not_answer_is_unavailable() -> None:
    url = f"postgresql://rackem:pw@127.0.0.1:{free_port()}/rackem"
    settings = ArchiveSettings(database_url=url, database_timeout_ms=1_000)
    with pytest.raises(StoreUnavailable):
        await open_records(settings)


async def test_a_restarted_database_is_served_again(own_postgres: Postgres) -> None:
    url = own_postgres.database("outage")
    migrate(parse_database_url(url))
    store = await open_records(ArchiveSettings(database_url=url, database_timeout_ms=2_000))
    try:
        record = MatchRecord("t1", "ABCD", "finished", 1, "{}")
        assert await store.put_record(record)
        own_postgres.stop_server()
        with pytest.raises(StoreUnavailable):
            await store.get_record("t1")
        with pytest.raises(StoreUnavailable):
            await store.ping()
        own_postgres.start_server()
        # The pool lets the dead connections go and makes new ones, its retries backing
        # off (1 s, 2 s, 4 s…): calls meanwhile are unavailable, then served.
        waited = await _until_served(store)
        assert await store.get_record("t1") == record
        print(f"served again {waited:.1f} s after the restart")
    finally:
        await store.close()
