"""One contract for the table store: the memory store, and Redis as a single server, a
3-primary cluster and behind Sentinel (tests/redis_engines.py)."""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import asdict, fields, replace

import pytest
from redis_engines import KINDS, Engines

from services.common.redis_client import Durability, connect
from services.table.store import TableStore
from services.table.store.lease_index import FINISHED, RedisLeaseIndex
from services.table.store.lua import COMPLAINED
from services.table.store.memory import MemoryStore
from services.table.store.redis import RedisStore, keys
from services.table.stored import Reply, SeatMeta, TableMeta, TableState

A, B = "replica-a 10.0.0.1:50052", "replica-b 10.0.0.2:50052"
LEASE = 5_000
SHORT = 1_500  # a lease that lasts the setup of a test on a loaded machine, then ends


@pytest.fixture(params=["memory", *KINDS])
async def store(
    request: pytest.FixtureRequest, redis_engines: Engines
) -> AsyncIterator[TableStore]:
    if request.param == "memory":
        yield MemoryStore()
        return
    client = connect(redis_engines.url(request.param))
    # Behind Sentinel, as deployed there: a move counts once the replica has it.
    replicas = 1 if request.param == "sentinel" else 0
    # A lease index of its own: the session's Redis holds other tests' tables too.
    index = f"test-{secrets.token_hex(4)}"
    yield RedisStore(client, durability=Durability(replicas, 2_000), index_prefix=index)
    await client.aclose()


def _meta(table_id: str | None = None) -> TableMeta:
    seats = (SeatMeta("Ann", False, "medium", "ab" * 32), SeatMeta("Bot 2", True, "hard", ""))
    return TableMeta(
        table_id or f"t{secrets.token_hex(8)}",
        "K7MX2Q",
        {"players": 2, "target": 100},
        secrets.token_hex(32),
        seats,
        1_764_000_000_000,
    )


def _move(seat: int = 0) -> dict[str, object]:
    return {"seat": seat, "act": "draw", "from": "stock", "by": "human"}


async def _created(store: TableStore, owner: str = A) -> TableMeta:
    meta = _meta()
    assert await store.create(meta, TableState.new(2), owner, LEASE)
    return meta


async def test_a_created_table_loads_back_whole(store: TableStore) -> None:
    meta = _meta()
    state = TableState.new(2)
    state.deadline_ms = 1_764_000_045_000
    assert await store.create(meta, state, A, LEASE)
    loaded = await store.load(meta.table_id)
    assert loaded is not None
    assert (loaded.meta, loaded.state, loaded.moves) == (meta, state, [])
    assert await store.holder(meta.table_id) == A
    assert meta.table_id in await store.live_tables()


async def test_a_table_open_to_spectators_loads_back_open_and_older_tables_closed(
    store: TableStore,
) -> None:
    meta = replace(_meta(), spectators=True)
    assert await store.create(meta, TableState.new(2), A, LEASE)
    loaded = await store.load(meta.table_id)
    assert loaded is not None and loaded.meta.spectators
    older = json.loads(_meta().to_json())
    del older["spectators"]  # stored before tables could be opened to spectators
    assert not TableMeta.from_json(json.dumps(older)).spectators


async def test_a_table_id_is_created_once(store: TableStore) -> None:
    meta = await _created(store)
    assert not await store.create(meta, TableState.new(2), B, LEASE)
    assert await store.holder(meta.table_id) == A


async def test_an_unknown_table_loads_as_none(store: TableStore) -> None:
    assert await store.load(f"t{secrets.token_hex(8)}") is None


async def test_moves_append_at_their_index_only(store: TableStore) -> None:
    meta = await _created(store)
    state = TableState.new(2)
    assert await store.append(meta.table_id, A, 0, _move(0), state) == "ok"
    assert await store.append(meta.table_id, A, 0, _move(1), state) == "conflict"
    assert await store.append(meta.table_id, A, 2, _move(1), state) == "conflict"
    state.status = "round_over"
    assert await store.append(meta.table_id, A, 1, _move(1), state) == "ok"
    loaded = await store.load(meta.table_id)
    assert loaded is not None
    assert loaded.moves == [_move(0), _move(1)] and loaded.state.status == "round_over"


async def test_two_appends_of_the_same_move_number_cannot_both_win(store: TableStore) -> None:
    meta = await _created(store)
    state = TableState.new(2)
    results = await asyncio.gather(
        *(store.append(meta.table_id, A, 0, _move(seat), state) for seat in (0, 1, 0, 1))
    )
    assert sorted(results) == ["conflict", "conflict", "conflict", "ok"]
    loaded = await store.load(meta.table_id)
    assert loaded is not None and len(loaded.moves) == 1


async def test_only_the_lease_holder_writes(store: TableStore) -> None:
    meta = await _created(store)
    state = TableState.new(2)
    state.status = "ended"
    assert await store.append(meta.table_id, B, 0, _move(), state) == "lost"
    assert not await store.save_state(meta.table_id, B, state)
    assert not await store.finish(meta.table_id, B, state, 60_000)
    loaded = await store.load(meta.table_id)
    assert loaded is not None and loaded.moves == [] and loaded.state.status == "playing"
    assert await store.save_state(meta.table_id, A, state)
    loaded = await store.load(meta.table_id)
    assert loaded is not None and loaded.state.status == "ended"


async def test_every_accepted_move_id_keeps_its_version(store: TableStore) -> None:
    tid = (await _created(store)).table_id
    first = Reply(0, "move-1", 1)
    assert await store.append(tid, A, 0, _move(0), TableState.new(2), first) == "ok"
    assert await store.reply(tid, 0, "move-1") == 1
    assert await store.reply(tid, 1, "move-1") is None  # ids belong to a seat
    assert await store.append(tid, A, 1, _move(1), TableState.new(2)) == "ok"
    second = Reply(0, "move-2", 3)
    assert await store.append(tid, A, 2, _move(0), TableState.new(2), second) == "ok"
    assert await store.reply(tid, 0, "move-1") == 1  # an older id: still its version
    assert await store.reply(tid, 0, "move-2") == 3
    assert await store.reply(tid, 0, "move-3") is None


async def test_a_held_lease_is_not_taken_until_released(store: TableStore) -> None:
    meta = await _created(store)
    tid = meta.table_id
    assert await store.acquire(tid, B, LEASE) == A
    assert await store.acquire(tid, A, LEASE) is None  # the holder extends its own
    assert await store.renew(tid, A, LEASE)
    assert not await store.renew(tid, B, LEASE)
    await store.release(tid, B)  # not B's: nothing happens
    assert await store.holder(tid) == A
    await store.release(tid, A)
    assert await store.holder(tid) is None
    assert await store.acquire(tid, B, LEASE) is None
    assert await store.holder(tid) == B


async def test_a_lease_that_is_not_renewed_expires(store: TableStore) -> None:
    meta = await _created(store)
    assert await store.acquire(meta.table_id, A, 100) is None
    await asyncio.sleep(0.3)
    assert await store.holder(meta.table_id) is None
    assert await store.append(meta.table_id, A, 0, _move(), TableState.new(2)) == "lost"
    assert not await store.renew(meta.table_id, A, LEASE)
    assert await store.acquire(meta.table_id, B, LEASE) is None


async def test_a_finished_table_stays_readable_then_expires(store: TableStore) -> None:
    meta = await _created(store)
    await store.append(meta.table_id, A, 0, _move(), TableState.new(2))
    state = TableState.new(2)
    state.status, state.ended_reason = "finished", "finished"
    assert await store.finish(meta.table_id, A, state, 300)
    assert await store.holder(meta.table_id) == FINISHED
    assert meta.table_id not in await store.live_tables()
    loaded = await store.load(meta.table_id)
    assert loaded is not None and loaded.state.over and len(loaded.moves) == 1
    await asyncio.sleep(0.5)
    assert await store.load(meta.table_id) is None


async def test_a_finished_table_can_never_be_taken_nor_finished_again(store: TableStore) -> None:
    """Finishing is one step: nobody can take the lease after it, so no sweeper can adopt
    the table and log its record again (even while it is still listed live)."""
    meta = await _created(store)
    state = TableState.new(2)
    state.status, state.ended_reason = "finished", "finished"
    assert await store.finish(meta.table_id, A, state, 60_000)
    assert await store.acquire(meta.table_id, B, LEASE) == FINISHED
    assert await store.acquire(meta.table_id, A, LEASE) == FINISHED
    assert not await store.finish(meta.table_id, A, state, 60_000)
    assert not await store.finish(meta.table_id, B, state, 60_000)
    assert await store.append(meta.table_id, A, 0, _move(), state) == "lost"
    await store.release(meta.table_id, A)
    assert await store.holder(meta.table_id) == FINISHED


async def test_appends_and_saves_renew_the_lease(store: TableStore) -> None:
    meta = await _created(store)
    assert await store.acquire(meta.table_id, A, 300) is None
    state = TableState.new(2)
    assert await store.append(meta.table_id, A, 0, _move(), state, lease_ms=LEASE) == "ok"
    await asyncio.sleep(0.5)  # past the 300 ms the lease had
    assert await store.holder(meta.table_id) == A
    assert await store.acquire(meta.table_id, A, 300) is None
    assert await store.save_state(meta.table_id, A, state, LEASE)
    await asyncio.sleep(0.5)
    assert await store.holder(meta.table_id) == A
    assert await store.acquire(meta.table_id, A, 200) is None
    assert await store.append(meta.table_id, A, 1, _move(1), state) == "ok"  # no lease_ms
    await asyncio.sleep(0.4)
    assert await store.holder(meta.table_id) is None


async def test_the_lease_index_lists_only_expired_leases(store: TableStore) -> None:
    held, idle, released = await _created(store), await _created(store), await _created(store)
    assert await store.expired_count() == 0
    assert await store.claim_expired(10, 1_000) == []
    # The owner notes its leases: one renewed just now, one LEASE ms ago (expiring now).
    await store.note_leases([(held.table_id, 0), (idle.table_id, LEASE)], LEASE)
    await store.release(released.table_id, A)  # a released lease is listed expired at once
    assert await store.expired_count() == 2
    claimed = await store.claim_expired(10, 300)
    assert sorted(e.table_id for e in claimed) == sorted([idle.table_id, released.table_id])
    assert all(0 <= e.overdue_ms < 1_000 for e in claimed)  # each expired just now
    assert await store.expired_count() == 0  # claimed: the other sweepers pass over them
    assert await store.claim_expired(10, 300) == []
    await asyncio.sleep(0.4)  # not adopted within the claim: they come round again
    assert len(await store.claim_expired(1, 300)) == 1
    assert len(await store.claim_expired(10, 300)) == 1
    assert held.table_id in await store.live_tables()


async def test_the_lease_index_says_how_long_ago_a_lease_expired(store: TableStore) -> None:
    held, lapsed = await _created(store), await _created(store)
    await store.note_leases([(held.table_id, 0), (lapsed.table_id, LEASE + 200)], LEASE)
    assert await store.lease_overdue_ms(held.table_id) == 0  # not expired
    assert await store.lease_overdue_ms("no-such-table") is None
    overdue = await store.lease_overdue_ms(lapsed.table_id)
    assert overdue is not None and 150 <= overdue < 1_000
    (claimed,) = await store.claim_expired(10, 60_000)
    assert claimed.table_id == lapsed.table_id and overdue <= claimed.overdue_ms < 1_000
    assert await store.lease_overdue_ms(lapsed.table_id) == 0  # claimed: ahead now


async def test_a_finished_or_forgotten_table_is_not_noted_back_into_the_index(
    store: TableStore,
) -> None:
    done, gone = await _created(store), await _created(store)
    state = TableState.new(2)
    state.status = "ended"
    assert await store.finish(done.table_id, A, state, 60_000)
    await store.forget(gone.table_id)
    await store.note_leases([(done.table_id, LEASE), (gone.table_id, LEASE)], LEASE)
    assert not {done.table_id, gone.table_id} & set(await store.live_tables())
    assert await store.claim_expired(10, 1_000) == []


async def test_a_forgotten_table_is_no_longer_live(store: TableStore) -> None:
    meta = await _created(store)
    await store.forget(meta.table_id)
    assert meta.table_id not in await store.live_tables()
    assert await store.load(meta.table_id) is not None


def test_redis_keys_share_one_cluster_slot_per_table() -> None:
    names = keys("t0123456789abcdef")
    assert names == [
        f"rackem:{{t:t0123456789abcdef}}:{part}"
        for part in ("meta", "log", "state", "replies", "lease", "complaint")
    ]


async def test_complaints_that_stand_the_hold_revoke_the_lease_and_fence_its_owner(
    store: TableStore,
) -> None:
    """Gateways could not reach A: the first complaint is only noted, one that comes the
    hold later revokes A's lease (its writes are refused from then on), and A may not take
    the table back while the complaint cools, but B may."""
    meta = await _created(store)
    table_id = meta.table_id
    assert await store.complain(table_id, A, 200, 5_000, 5_000) == "noted"
    assert await store.complain(table_id, A, 200, 5_000, 5_000) == "noted"
    assert await store.holder(table_id) == A  # one gateway's blip moves nothing
    assert await store.complain(table_id, B, 200, 5_000, 5_000) == "moved"  # not the holder
    await asyncio.sleep(0.25)
    assert await store.complain(table_id, A, 200, 5_000, 5_000) == "revoked"
    assert await store.holder(table_id) is None
    assert await store.save_state(table_id, A, TableState(), 30_000) is False  # fenced
    assert await store.acquire(table_id, A, 30_000) == COMPLAINED  # not back while it cools
    assert await store.acquire(table_id, B, 30_000) is None
    assert await store.complain(table_id, B, 0, 5_000, 5_000) == "cooling"  # no flapping
    assert await store.holder(table_id) == B


async def test_a_complaint_not_repeated_within_its_window_is_forgotten(store: TableStore) -> None:
    meta = await _created(store)
    assert await store.complain(meta.table_id, A, 300, 100, 5_000) == "noted"
    await asyncio.sleep(0.35)  # past the hold, but the first complaint was forgotten
    assert await store.complain(meta.table_id, A, 300, 100, 5_000) == "noted"
    assert await store.holder(meta.table_id) == A


async def _leases_held_and_lost(store: TableStore) -> tuple[list[str], list[bool]]:
    """Ids in a mixed order, and which of them A still holds: taken, expired, unknown."""
    held = [(await _created(store)).table_id for _ in range(3)]
    for table_id in held:
        assert await store.acquire(table_id, A, SHORT) is None  # only a renewal keeps it
    taken = (await _created(store)).table_id
    await store.release(taken, A)
    assert await store.acquire(taken, B, SHORT) is None
    expired = (await _created(store)).table_id
    assert await store.acquire(expired, A, 50) is None
    unknown = f"t{secrets.token_hex(8)}"
    await asyncio.sleep(0.2)
    ids = [held[0], taken, held[1], unknown, expired, held[2]]
    return ids, [True, False, True, False, False, True]


async def test_renew_many_extends_held_leases_and_reports_lost_ones(store: TableStore) -> None:
    ids, expected = await _leases_held_and_lost(store)
    assert await store.renew_many(ids, A, LEASE) == expected
    await asyncio.sleep(SHORT / 1000 + 0.1)  # past the short leases: only the renewed are held
    holders = [await store.holder(table_id) for table_id in ids]
    assert holders == [A, None, A, None, None, A]  # B's lease was not extended, nor taken
    assert await store.load(ids[3]) is None  # the unknown table was not made up


async def test_renew_many_of_nothing_is_nothing(store: TableStore) -> None:
    assert await store.renew_many([], A, LEASE) == []


@pytest.mark.parametrize("kind", KINDS)
async def test_redis_renews_and_notes_in_chunks_over_index_shards(
    redis_engines: Engines, kind: str
) -> None:
    client = connect(redis_engines.url(kind))
    store = RedisStore(client, chunk=2, index_shards=3, index_prefix=f"t{secrets.token_hex(4)}")
    try:
        ids, expected = await _leases_held_and_lost(store)
        assert await store.renew_many(ids, A, LEASE) == expected
        assert [await store.holder(t) for t in ids] == [A, B, A, None, None, A]
        made = [t for t in ids if t != ids[3]]  # the unknown one was never created
        assert sorted(await store.live_tables()) == sorted(made)
        await store.note_leases([(t, LEASE) for t in made], LEASE)
        assert await store.expired_count() == len(made)
        assert sorted(e.table_id for e in await store.claim_expired(100, 60_000)) == sorted(made)
        assert {store.index.key(t) for t in made} <= set(store.index.keys)
        # Ids spread over every shard (five random ids all land on one of three 1 in 81
        # times, so the spread is shown on many).
        assert {store.index.key(f"t{n:04x}") for n in range(64)} == set(store.index.keys)
    finally:
        await client.aclose()


def test_each_lease_index_shard_is_its_own_cluster_slot() -> None:
    index = RedisLeaseIndex(connect("redis://127.0.0.1:1/0"), shards=4)
    assert index.keys == [f"rackem:{{leases:{n}}}" for n in range(4)]


def test_a_state_round_trips_through_json_with_every_field() -> None:
    state = TableState(
        status="round_over",
        ended_reason="",
        deadline_ms=123,
        covered=[True, False, False],
        left=[False, True, False],
        continue_deadline_ms=456,
        continued=[True, False, True],
        dealt_round=3,
    )
    assert set(state.to_dict()) == {f.name for f in fields(TableState)}
    assert state.to_dict() == asdict(state)
    assert TableState.from_json(state.to_json()) == state
    copied = state.copy()
    copied.covered[0] = False  # a copy shares no list with its original
    assert state.covered[0] is True


@pytest.mark.parametrize("kind", ["single", "cluster"])
async def test_tables_of_the_old_live_set_are_moved_into_the_index_expired(
    redis_engines: Engines, kind: str
) -> None:
    """A rolling upgrade: tables that replicas of before the index listed in the live set
    are swept from the index (their leases checked), and listed once."""
    client = connect(redis_engines.url(kind))
    prefix = f"t{secrets.token_hex(4)}"
    store = RedisStore(client, index_shards=2, index_prefix=prefix)
    try:
        listed = await _created(store)  # in the index already, its lease held
        old = [(await _created(store)).table_id for _ in range(3)]
        for table_id in old:
            await store.forget(table_id)  # as a replica of before would have listed them
        await client.sadd(f"{prefix}:tables:live", *old, listed.table_id)
        assert await store.index.import_live_set() == 4
        assert sorted(e.table_id for e in await store.claim_expired(10, 60_000)) == sorted(old)
        assert listed.table_id in await store.live_tables()
        assert not await client.exists(f"{prefix}:tables:live")
        assert await store.index.import_live_set() == 0
    finally:
        await client.aclose()


# -- the pending index: finished tables waiting for the archive -----------------------------


def _finished_state() -> TableState:
    state = TableState.new(2)
    state.status, state.ended_reason = "finished", "finished"
    return state


async def test_a_table_finished_for_the_archive_is_pending_until_dropped(
    store: TableStore,
) -> None:
    meta = await _created(store)
    await store.append(meta.table_id, A, 0, _move(), TableState.new(2))
    before = int(time.time() * 1000)
    assert await store.finish(meta.table_id, A, _finished_state(), 60_000, archive_after_ms=300)
    assert meta.table_id not in await store.live_tables()
    assert await store.pending_count() == 1
    assert await store.claim_pending(10, 1_000) == []  # left to its finisher for 300 ms
    await asyncio.sleep(0.4)
    [pending] = await store.claim_pending(10, 300)
    assert pending.table_id == meta.table_id
    assert before - 1_000 <= pending.finished_at_ms <= int(time.time() * 1000) + 1_000
    assert await store.claim_pending(10, 300) == []  # claimed: the other sweepers pass over it
    await asyncio.sleep(0.4)  # not dropped within the claim: it comes round again
    [again] = await store.claim_pending(10, 300)
    assert again == pending  # its finish time kept
    loaded = await store.load(meta.table_id)  # the keys stay meanwhile
    assert loaded is not None and loaded.state.over and len(loaded.moves) == 1
    assert await store.drop_archived(meta.table_id)
    assert await store.load(meta.table_id) is None
    assert await store.holder(meta.table_id) is None
    assert await store.pending_count() == 0
    assert not await store.drop_archived(meta.table_id)  # gone already: nothing, no error


async def test_a_table_finished_without_an_archive_is_not_pending(store: TableStore) -> None:
    meta = await _created(store)
    assert await store.finish(meta.table_id, A, _finished_state(), 60_000)
    assert await store.pending_count() == 0


async def test_pending_is_listed_once_and_never_drops_a_live_table(store: TableStore) -> None:
    done, live = await _created(store), await _created(store)
    assert await store.finish(done.table_id, A, _finished_state(), 60_000, archive_after_ms=0)
    first = await store.claim_pending(10, 0)
    await store.add_pending(done.table_id, 60_000)  # a sweeper listing it again: kept as it was
    assert await store.pending_count() == 1
    assert await store.claim_pending(10, 0) == first
    # A live table is never dropped, even if listed by mistake: only its entry goes.
    await store.add_pending(live.table_id, 0)
    assert not await store.drop_archived(live.table_id)
    assert await store.holder(live.table_id) == A
    assert await store.load(live.table_id) is not None
    assert await store.pending_count() == 1


async def test_a_pending_table_still_expires_after_its_ttl(store: TableStore) -> None:
    """The backlog's bound: a finished table's keys keep their TTL while they wait."""
    meta = await _created(store)
    assert await store.finish(meta.table_id, A, _finished_state(), 300, archive_after_ms=0)
    await asyncio.sleep(0.5)
    assert await store.load(meta.table_id) is None
    assert [p.table_id for p in await store.claim_pending(10, 1_000)] == [meta.table_id]


@pytest.mark.parametrize("kind", KINDS)
async def test_redis_pending_spreads_over_the_index_shards(
    redis_engines: Engines, kind: str
) -> None:
    client = connect(redis_engines.url(kind))
    store = RedisStore(client, index_shards=3, index_prefix=f"t{secrets.token_hex(4)}")
    try:
        made = [(await _created(store)).table_id for _ in range(6)]
        for table_id in made:
            assert await store.finish(table_id, A, _finished_state(), 60_000, archive_after_ms=0)
        assert await store.pending_count() == 6
        claimed = await store.claim_pending(4, 60_000)
        claimed += await store.claim_pending(4, 60_000)
        assert sorted(p.table_id for p in claimed) == sorted(made)
        prefix = store.pending.keys[0].removesuffix(":{archive:0}")
        assert store.pending.keys == [f"{prefix}:{{archive:{n}}}" for n in range(3)]
        assert {store.pending.key(f"t{n:04x}") for n in range(64)} == set(store.pending.keys)
        for table_id in made:
            assert await store.drop_archived(table_id)
        assert await store.pending_count() == 0
    finally:
        await client.aclose()
