"""The memory store keeps only tables being filled: started and closed ones (record, code,
seat tokens) move to its archive, read back from there, and from a new store on the file."""

from __future__ import annotations

from pathlib import Path

from rackcore import Rules
from services.common.archive import Archive
from services.matchmaker.ids import hash_token, new_table_id, new_token
from services.matchmaker.records import NewTable, Sitter, Timings
from services.matchmaker.store.memory import MemoryStore

T = Timings(fill_ms=15_000, fill_lone_ms=30_000, claim_ms=10_000, retry_ms=1_000, max_attempts=3)
NOW = 1_700_000_000_000


def _table(code: str) -> NewTable:
    return NewTable(new_table_id(), code, False, Rules(players=2), "easy", 0)


async def _started(store: MemoryStore, code: str) -> tuple[str, str]:
    ann = Sitter("Ann", hash_token(new_token()))
    placed = await store.create_private(_table(code), ann, NOW, T, None)
    assert placed is not None
    assert await store.claim(placed.table_id, "me", NOW, T)
    started = await store.finish(placed.table_id, "me", "127.0.0.1:1", [(1, "Bot Ada")], T)
    assert started is not None and started.status == "started"
    return placed.table_id, ann.token_hash


async def test_started_tables_leave_memory_and_are_still_answered(tmp_path: Path) -> None:
    store = MemoryStore(archive=Archive(str(tmp_path / "mm.sqlite3")))
    started = [await _started(store, f"CODE{i}") for i in range(5)]
    waiting = await store.create_private(_table("WAITS"), Sitter("Bob", "ab" * 32), NOW, T, None)
    assert waiting is not None
    assert store.archive_done() == 5
    assert set(store._tables) == {waiting.table_id}  # only the table still being filled
    assert set(store._tokens.values()) == {f"{waiting.table_id} 0"}
    assert set(store._codes) == {"WAITS"}
    assert not any(key in (tid, tok) for _, key in store._expiry for tid, tok in started)
    for table_id, token_hash in started:
        record = await store.table(table_id)
        assert record is not None and record.status == "started"
        assert record.seats[1].name == "Bot Ada" and record.seats[1].bot
        assert await store.seat_of(token_hash) == (table_id, 0)
    # Read back, they are in memory until the next sweep moves them out again.
    assert store.archive_done() == 5
    assert set(store._tables) == {waiting.table_id}


async def test_a_new_store_on_the_same_file_answers_for_the_started_tables(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "mm.sqlite3")
    first = MemoryStore(archive=Archive(path))
    table_id, token_hash = await _started(first, "CODEA")
    first.archive_done()
    again = MemoryStore(archive=Archive(path))
    record = await again.table(table_id)
    assert record is not None and record.status == "started" and record.code == "CODEA"
    assert await again.seat_of(token_hash) == (table_id, 0)


async def test_an_archived_record_expires_with_its_ttl(tmp_path: Path) -> None:
    now = [NOW]
    store = MemoryStore(clock=lambda: now[0], archive=Archive(clock=lambda: now[0]))
    table_id, token_hash = await _started(store, "CODEB")
    store.archive_done()
    now[0] += T.done_ttl_ms - 1
    assert await store.table(table_id) is not None
    store.archive_done()
    now[0] += max(T.done_ttl_ms, T.token_ttl_ms)
    assert await store.table(table_id) is None
    assert await store.seat_of(token_hash) is None
