"""The matchmaker's key layout (store/redis_keys.py), and what the Redis store does with keys
that point where they no longer should."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis.crc import key_slot
from redis_engines import Engines

from rackcore import Rules
from services.common.errors import ServiceError
from services.matchmaker.ids import hash_token, new_table_id, new_token
from services.matchmaker.records import NewTable, Sitter, Timings
from services.matchmaker.store.redis_keys import ROOM_HOMES, Layout

from .conftest import RedisFactory

T = Timings()
NOW = 1_700_000_000_000


def test_a_namespace_with_a_hash_tag_is_refused() -> None:
    with pytest.raises(ValueError, match="hash tag"):
        Layout("mm:{mm}:")


def test_each_home_is_one_slot_and_the_homes_are_many() -> None:
    layout = Layout()
    for home in layout.homes:
        assert len({key_slot(k.encode()) for k in (home.table("t1"), home.due, home.queue(2))}) == 1
    assert len({key_slot(home.due.encode()) for home in layout.homes}) == len(layout.homes)
    ids = [new_table_id() for _ in range(400)]
    assert {layout.room(i) for i in ids} == set(layout.homes[3 : 3 + ROOM_HOMES])
    assert all(layout.room(i) == Layout().room(i) for i in ids)  # every replica agrees
    assert layout.legacy.prefix == "mm:{mm}:" and layout.channel == "mm:{mm}:ev"
    codes = {key_slot(layout.code(c).encode()) for c in ("AAAAAA", "BBBBBB", "CCCCCC")}
    assert len(codes) == 3


@pytest.fixture
async def factory(redis_engines: Engines) -> AsyncIterator[RedisFactory]:
    made = RedisFactory(redis_engines.url("cluster"))
    yield made
    await made.close()


async def test_a_token_key_left_pointing_at_a_seat_it_lost_frees_nothing(
    factory: RedisFactory,
) -> None:
    store = factory.store()
    ann, bob = (Sitter(n, hash_token(new_token())) for n in ("Ann", "Bob"))
    table = NewTable(new_table_id(), "STALE1", False, Rules(players=3), "easy", 0)
    await store.create_private(table, ann, NOW, T, None)
    await store.join_code("STALE1", bob, NOW, T, "me")
    await store.leave(bob.token_hash, NOW, T)
    # As if a crash had kept Bob's token key after he left, and Cy took his seat.
    layout = Layout(factory.namespace)
    home = layout.room(table.id).name
    await factory.clients[0].set(layout.token(bob.token_hash), f"{table.id} 1 {home}")
    cy = Sitter("Cy", hash_token(new_token()))
    assert (await store.join_code("STALE1", cy, NOW, T, "me")).seat == 1
    with pytest.raises(ServiceError) as refused:
        await store.leave(bob.token_hash, NOW, T)
    assert refused.value.code == "bad_token"
    assert await store.seat_of(bob.token_hash) is None  # deleted when it tried
    record = await store.table(table.id)
    assert record is not None and [s.name for s in record.seats] == ["Ann", "Cy", ""]


async def test_a_replica_that_never_saw_a_table_finds_it_by_id_in_its_home(
    factory: RedisFactory,
) -> None:
    maker = factory.store()
    room = NewTable(new_table_id(), "HOMES1", False, Rules(players=2), "easy", 0)
    quick = NewTable(new_table_id(), "HOMES2", True, Rules(players=4), "easy", -1)
    await maker.create_private(room, Sitter("Ann", hash_token(new_token())), NOW, T, None)
    await maker.quick_join(quick, Sitter("Bob", hash_token(new_token())), NOW, T, "me")
    for table in (room, quick):
        fresh = factory.store()
        record = await fresh.table(table.id)
        assert record is not None and record.code == table.code
        assert await fresh.claim(table.id, "other", NOW, T)  # the scripts find it too
    assert await factory.store().table(new_table_id()) is None
