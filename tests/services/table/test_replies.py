from __future__ import annotations

from services.table.replies import Replies
from services.table.store.memory import MemoryStore
from services.table.stored import SeatMeta, TableMeta, TableState

OWNER = "replica-a 127.0.0.1:1"


async def _store_with_table() -> MemoryStore:
    store = MemoryStore()
    seats = (SeatMeta("Ann", False, "medium", "ab" * 32), SeatMeta("Bot", True, "easy", ""))
    meta = TableMeta("t1", "", {"players": 2}, "00" * 32, seats, 0)
    await store.create(meta, TableState.new(2), OWNER, 5_000)
    return store


async def _accepted(store: MemoryStore, replies: Replies | None, n: int, move_id: str) -> None:
    """Move ``n`` of seat 0, id ``move_id``, stored with its version (as the table does)."""
    move = {"seat": 0, "act": "draw", "from": "stock"}
    record = Replies.record(0, move_id, n + 1)
    assert await store.append("t1", OWNER, n, move, TableState.new(2), record) == "ok"
    if replies is not None:
        replies.remember(0, move_id, n + 1)


async def test_every_accepted_id_gets_its_version_again() -> None:
    store = await _store_with_table()
    replies = Replies(store, "t1", adopted=False)
    await _accepted(store, replies, 0, "a")
    assert await replies.earlier(0, "a") == 1
    await _accepted(store, replies, 1, "b")
    assert await replies.earlier(0, "a") == 1
    assert await replies.earlier(0, "b") == 2
    assert await replies.earlier(1, "b") is None  # ids belong to a seat
    assert await replies.earlier(0, "c") is None


async def test_a_table_that_made_its_moves_itself_never_asks_the_store() -> None:
    store = await _store_with_table()
    replies = Replies(store, "t1", adopted=False)
    await _accepted(store, None, 0, "a")  # in the store only: not this table's move
    assert await replies.earlier(0, "a") is None


async def test_a_rebuilt_table_finds_earlier_ids_in_the_store() -> None:
    store = await _store_with_table()
    await _accepted(store, None, 0, "a")
    adopted = Replies(store, "t1", adopted=True)
    assert await adopted.earlier(0, "a") == 1
    assert await adopted.earlier(0, "z") is None
