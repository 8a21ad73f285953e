"""The record store's contract, on SQLite and PostgreSQL alike (services/archive/records.py)."""

from __future__ import annotations

import asyncio
import json
import secrets

import pytest

from services.archive import ArchiveSettings, MatchRecord, RecordStore, open_records


def _record(
    table_id: str = "", log: str = "", finished_at_ms: int = 1_700_000_000_000
) -> MatchRecord:
    table_id = table_id or f"t{secrets.token_hex(8)}"
    log = log or json.dumps(
        {"format": "rackem-match/1", "moves": [{"seat": 0, "act": "draw"}] * 50}
    )
    return MatchRecord(table_id, "ABCD", "finished", finished_at_ms, log)


async def test_a_record_reads_back_as_it_was_put(records: RecordStore) -> None:
    record = _record()
    assert await records.put_record(record) is True
    assert await records.get_record(record.table_id) == record


async def test_a_missing_record_is_none(records: RecordStore) -> None:
    assert await records.get_record("t0000000000000000") is None


async def test_the_first_put_wins_and_a_second_says_so(records: RecordStore) -> None:
    first = _record()
    second = MatchRecord(first.table_id, "WXYZ", "abandoned", first.finished_at_ms + 5, "{}")
    assert await records.put_record(first) is True
    assert await records.put_record(second) is False
    assert await records.put_record(first) is False  # a retry of the same write, too
    assert await records.get_record(first.table_id) == first


async def test_of_racing_writers_on_their_own_connections_one_wins(url: str) -> None:
    stores = [await open_records(ArchiveSettings(database_url=url)) for _ in range(6)]
    try:
        for _ in range(5):  # a few rounds, each a new id, all writers at once
            table_id = f"t{secrets.token_hex(8)}"
            candidates = [
                _record(table_id, log=json.dumps({"writer": i})) for i in range(len(stores))
            ]
            won = await asyncio.gather(
                *(store.put_record(c) for store, c in zip(stores, candidates, strict=True))
            )
            assert won.count(True) == 1
            winner = candidates[won.index(True)]
            for store in stores:
                assert await store.get_record(table_id) == winner
    finally:
        for store in stores:
            await store.close()


async def test_purge_removes_the_records_finished_before_the_cutoff(records: RecordStore) -> None:
    old = [_record(finished_at_ms=1_000 + i) for i in range(3)]
    new = [_record(finished_at_ms=5_000 + i) for i in range(2)]
    for record in old + new:
        await records.put_record(record)
    assert await records.purge(5_000) == 3
    assert [await records.get_record(r.table_id) for r in old] == [None] * 3
    assert [await records.get_record(r.table_id) for r in new] == new
    assert await records.purge(5_000) == 0


async def test_purge_goes_in_batches_past_the_first(
    records: RecordStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import services.archive.postgres
    import services.archive.sqlite

    monkeypatch.setattr(services.archive.sqlite, "PURGE_BATCH", 2)
    monkeypatch.setattr(services.archive.postgres, "PURGE_BATCH", 2)
    for i in range(5):
        await records.put_record(_record(finished_at_ms=i))
    kept = _record(finished_at_ms=10)
    await records.put_record(kept)
    assert await records.purge(10) == 5
    assert await records.get_record(kept.table_id) == kept


async def test_a_large_record_round_trips(records: RecordStore) -> None:
    # A few MB of JSON, some of it incompressible: read back byte for byte.
    moves = [
        {"seat": i % 4, "act": "place", "slot": i % 10, "n": secrets.token_hex(8)}
        for i in range(40_000)
    ]
    record = _record(log=json.dumps({"format": "rackem-match/1", "moves": moves, "note": "é✓"}))
    assert len(record.log_json) > 2_000_000
    assert await records.put_record(record) is True
    assert await records.get_record(record.table_id) == record


async def test_a_log_that_does_not_compress_is_kept_plain(records: RecordStore) -> None:
    record = _record(log='"x"')
    await records.put_record(record)
    assert await records.get_record(record.table_id) == record


async def test_ping_answers(records: RecordStore) -> None:
    await records.ping()
