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


async def test_a_seats_latest_id_gets_its_reply_and_older_ids_their_version() -> None:
    replies = Replies(MemoryStore(), "t1", adopted=False)
    replies.remember(0, "a", _reply(1))
    assert await replies.earlier(0, "a") == (1, _reply(1))
    replies.remember(0, "b", _reply(3))
    assert await replies.earlier(0, "a") == (1, None)
    assert await replies.earlier(0, "b") == (3, _reply(3))
    assert await replies.earlier(1, "b") is None


async def test_a_rebuilt_table_finds_earlier_ids_in_the_store() -> None:
    store = MemoryStore()
    seats = (SeatMeta("Ann", False, "medium", "ab" * 32), SeatMeta("Bot", True, "easy", ""))
    meta = TableMeta("t1", "", {"players": 2}, "00" * 32, seats, 0)
    await store.create(meta, TableState.new(2), OWNER, 5_000)
    record = Replies.record(0, "a", _reply(1))
    await store.append(
        "t1", OWNER, 0, {"seat": 0, "act": "draw", "from": "stock"}, TableState.new(2), record
    )
    assert await Replies(store, "t1", adopted=True).earlier(0, "a") == (1, _reply(1))
    assert await Replies(store, "t1", adopted=False).earlier(0, "a") is None
