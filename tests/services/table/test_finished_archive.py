"""The in-process table store keeps only live tables: a finished one moves to its archive
(services/common/archive.py), is read back from there, and from a new store on the file."""

from __future__ import annotations

import secrets
from pathlib import Path

from services.common.archive import Archive
from services.table.store.lease_index import FINISHED
from services.table.store.memory import MemoryStore
from services.table.stored import Reply, SeatMeta, TableMeta, TableState

A = "replica-a 10.0.0.1:50052"


def _meta() -> TableMeta:
    seats = (SeatMeta("Ann", False, "medium", "ab" * 32), SeatMeta("Bot 2", True, "hard", ""))
    return TableMeta(
        f"t{secrets.token_hex(8)}",
        "K7MX2Q",
        {"players": 2, "target": 100},
        secrets.token_hex(32),
        seats,
        1_764_000_000_000,
    )


async def _finished(store: MemoryStore) -> TableMeta:
    meta = _meta()
    assert await store.create(meta, TableState.new(2), A, 5_000)
    move = {"seat": 0, "act": "draw", "from": "stock", "by": "human"}
    reply = Reply(0, "move-1", 1)
    assert await store.append(meta.table_id, A, 0, move, TableState.new(2), reply) == "ok"
    state = TableState.new(2)
    state.status, state.ended_reason = "finished", "finished"
    assert await store.finish(meta.table_id, A, state, 60_000)
    return meta


async def test_a_finished_table_leaves_memory_and_reads_back_whole(tmp_path: Path) -> None:
    store = MemoryStore(Archive(str(tmp_path / "tables.sqlite3")))
    live = _meta()
    assert await store.create(live, TableState.new(2), A, 5_000)
    done = [await _finished(store) for _ in range(3)]
    assert set(store._tables) == {live.table_id}
    assert set(store._leases) == {live.table_id}
    assert await store.live_tables() == [live.table_id]
    for meta in done:
        loaded = await store.load(meta.table_id)
        assert loaded is not None and loaded.meta == meta and loaded.state.over
        assert len(loaded.moves) == 1
        assert await store.holder(meta.table_id) == FINISHED
        assert await store.acquire(meta.table_id, A, 5_000) == FINISHED
        assert await store.reply(meta.table_id, 0, "move-1") == 1
        assert not await store.create(meta, TableState.new(2), A, 5_000)
    assert set(store._tables) == {live.table_id}  # reading them back kept them out


async def test_a_new_store_on_the_same_file_serves_the_finished_tables(tmp_path: Path) -> None:
    path = str(tmp_path / "tables.sqlite3")
    meta = await _finished(MemoryStore(Archive(path)))
    again = MemoryStore(Archive(path))
    loaded = await again.load(meta.table_id)
    assert loaded is not None and loaded.meta == meta and loaded.state.status == "finished"
    assert await again.holder(meta.table_id) == FINISHED
