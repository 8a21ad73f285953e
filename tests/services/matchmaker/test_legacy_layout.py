"""Rooms and seat tokens a release before the spread layout left in Redis (every key
under ``mm:{mm}:``): still found, joined, left and started by this one, on a single
server and on a 3-primary cluster."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis_engines import Engines

from rackcore import Rules
from services.common.errors import ServiceError
from services.matchmaker.ids import hash_token, new_table_id, new_token
from services.matchmaker.records import NewTable, Sitter, Timings, new_fields
from services.matchmaker.store.redis_keys import Layout

from .conftest import RedisFactory

T = Timings(fill_ms=15_000, fill_lone_ms=30_000, claim_ms=10_000)
NOW = 1_700_000_000_000


@pytest.fixture(params=["single", "cluster"])
async def factory(
    request: pytest.FixtureRequest, redis_engines: Engines
) -> AsyncIterator[RedisFactory]:
    made = RedisFactory(redis_engines.url(request.param))
    yield made
    await made.close()


def sitter(name: str) -> Sitter:
    return Sitter(name, hash_token(new_token()))


async def old_room(
    factory: RedisFactory, code: str, creator: Sitter, public: bool = False
) -> NewTable:
    """A waiting table as the old scripts wrote it: record, code, token (and for a quick
    match table its queue and due entries), all in the one old slot."""
    players = 2 if public else 3
    table = NewTable(
        new_table_id(), code, public, Rules(players=players), "easy", -1 if public else 0
    )
    layout = Layout(factory.namespace)
    legacy = layout.legacy
    client = factory.clients[0]  # a store's, made first
    deadline = NOW + T.fill_lone_ms if public else 0
    await client.hset(legacy.table(table.id), mapping=new_fields(table, creator, NOW, deadline))
    await client.set(layout.legacy_code(code), table.id)
    await client.set(layout.legacy_token(creator.token_hash), f"{table.id} 0")
    if public:
        await client.zadd(legacy.queue(players), {table.id: NOW})
        await client.zadd(legacy.due, {table.id: deadline})
    return table


async def test_an_old_private_room_is_found_joined_left_and_closed(factory: RedisFactory) -> None:
    store = factory.store()
    ann = sitter("Ann")
    table = await old_room(factory, "OLDAAA", ann)
    assert await store.seat_of(ann.token_hash) == (table.id, 0)
    assert await store.table_by_code("OLDAAA") == table.id
    record = await store.table(table.id)
    assert record is not None and record.status == "waiting" and record.seats[0].name == "Ann"
    # Its code stays its own: a new room does not take it.
    fresh = NewTable(new_table_id(), "OLDAAA", False, Rules(players=2), "easy", 0)
    assert await store.create_private(fresh, sitter("Eve"), NOW, T, None) is None
    assert await store.table_by_code("OLDAAA") == table.id

    other = factory.store()  # another replica, that never saw the table
    bob = sitter("Bob")
    placed = await other.join_code("OLDAAA", bob, NOW + 1, T, "me")
    assert (placed.table_id, placed.seat, placed.start) == (table.id, 1, False)
    assert await store.seat_of(bob.token_hash) == (table.id, 1)
    after = await other.leave(bob.token_hash, NOW + 2, T)
    assert after.seats[1].name == "" and await store.seat_of(bob.token_hash) is None
    closed = await store.leave(ann.token_hash, NOW + 3, T)
    assert closed.status == "closed"
    assert await store.table_by_code("OLDAAA") is None  # its code freed
    with pytest.raises(ServiceError) as gone:
        await store.leave(ann.token_hash, NOW + 4, T)
    assert gone.value.code == "bad_token"


async def test_an_old_quick_match_table_is_started_when_due(factory: RedisFactory) -> None:
    store = factory.store()
    ann = sitter("Ann")
    table = await old_room(factory, "OLDQQQ", ann, public=True)
    # New sitters go to new tables (the old queue is not the new one's) ...
    placed = await store.quick_join(
        NewTable(new_table_id(), "NEWQQQ", True, Rules(players=2), "easy", -1),
        sitter("Bob"),
        NOW,
        T,
        "me",
    )
    assert placed is not None and placed.table_id != table.id
    # ... and the old table starts at its fill deadline, with a bot, as before.
    assert await store.claim_due("me", NOW + T.fill_lone_ms - 1, 10, T) == []
    due = await factory.store().claim_due("me", NOW + T.fill_lone_ms, 10, T)
    assert sorted(due) == sorted([table.id, placed.table_id])
    started = await store.finish(table.id, "me", "replica:1", [(1, "Bot Ada")], T)
    assert started is not None and started.status == "started"
    assert [s.name for s in started.seats] == ["Ann", "Bot Ada"]
    assert await store.seat_of(ann.token_hash) == (table.id, 0)
    assert await store.table_by_code("OLDQQQ") == table.id
