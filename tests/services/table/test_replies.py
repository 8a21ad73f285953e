from __future__ import annotations

from services._gen.rackem.v1 import game_pb2, table_pb2
from services.table.replies import Replies
from services.table.store.memory import MemoryStore
from services.table.stored import SeatMeta, TableMeta, TableState

OWNER = "replica-a 127.0.0.1:1"


def _reply(version: int) -> table_pb2.SubmitMoveReply:
    return table_pb2.SubmitMoveReply(
        version=version, view=game_pb2.TableView(table_id="t1", version=version)
    )


async def _store_with_table() -> MemoryStore:
    store = MemoryStore()
    seats = (SeatMeta("Ann", False, "medium", "ab" * 32), SeatMeta("Bot", True, "easy", ""))
    meta = TableMeta("t1", "", {"players": 2}, "00" * 32, seats, 0)
    await store.create(meta, TableState.new(2), OWNER, 5_000)
    return store


async def _accepted(store: MemoryStore, replies: Replies | None, n: int, move_id: str) -> None:
    """Move ``n`` of seat 0, id ``move_id``, stored with its reply (as the table does)."""
    record = Replies.record(0, move_id, _reply(n + 1))
    move = {"seat": 0, "act": "draw", "from": "stock"}
    assert await store.append("t1", OWNER, n, move, TableState.new(2), record) == "ok"
    if replies is not None:
        replies.remember(0, move_id, _reply(n + 1))


async def test_a_seats_latest_id_gets_its_reply_and_older_ids_their_version() -> None:
    store = await _store_with_table()
    replies = Replies(store, "t1", adopted=False)
    await _accepted(store, replies, 0, "a")
    assert await replies.earlier(0, "a") == (1, _reply(1))
    await _accepted(store, replies, 1, "b")
    assert await replies.earlier(0, "a") == (1, None)
    assert await replies.earlier(0, "b") == (2, _reply(2))
    assert await replies.earlier(1, "b") is None


async def test_the_latest_reply_is_read_from_the_store_not_kept_twice() -> None:
    store = await _store_with_table()
    replies = Replies(store, "t1", adopted=False)
    await _accepted(store, replies, 0, "a")
    assert all(isinstance(held, str) for held in vars(replies)["_latest"].values())  # ids only
    assert await replies.earlier(0, "a") == (1, _reply(1))


async def test_a_rebuilt_table_finds_earlier_ids_in_the_store() -> None:
    store = await _store_with_table()
    await _accepted(store, None, 0, "a")
    assert await Replies(store, "t1", adopted=True).earlier(0, "a") == (1, _reply(1))
    assert await Replies(store, "t1", adopted=False).earlier(0, "a") is None
