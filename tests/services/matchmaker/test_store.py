"""The store contract, on both implementations: memory, and Redis with its Lua scripts as
a single server, a 3-primary cluster and behind Sentinel (tests/redis_engines.py).

Times are given explicitly (``now``), so fill timers and claim expiries are exact."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest
from redis_engines import KINDS, Engines

from rackcore import Rules
from services.common.errors import ServiceError
from services.common.redis_client import Durability
from services.matchmaker.ids import hash_token, new_table_id, new_token
from services.matchmaker.records import NewTable, Sitter, Timings
from services.matchmaker.store import Store
from services.matchmaker.store.memory import MemoryStore

from .conftest import RedisFactory

T = Timings(fill_ms=15_000, fill_lone_ms=30_000, claim_ms=10_000, retry_ms=1_000, max_attempts=3)
NOW = 1_700_000_000_000


@pytest.fixture(params=["memory", *KINDS])
async def stores(
    request: pytest.FixtureRequest, redis_engines: Engines
) -> AsyncIterator[Callable[[], Store]]:
    """Stores that share one state (each call another replica's view), on every engine."""
    if request.param == "memory":
        shared = MemoryStore()
        yield lambda: shared
        return
    # Behind Sentinel, as deployed there: a write is answered once the replica has it.
    durability = Durability(1, 2_000) if request.param == "sentinel" else None
    factory = RedisFactory(redis_engines.url(request.param), durability)
    yield factory.store
    await factory.close()


def sitter(name: str) -> Sitter:
    return Sitter(name, hash_token(new_token()))


_codes = iter(f"Q{i:05d}".replace("0", "A").replace("1", "B") for i in range(10**5))


def quick(players: int = 2, code: str | None = None) -> NewTable:
    return NewTable(
        new_table_id(), code or next(_codes), True, Rules(players=players), "medium", -1
    )


def private(players: int = 2, code: str | None = None) -> NewTable:
    return NewTable(new_table_id(), code or next(_codes), False, Rules(players=players), "hard", 0)


async def test_quick_join_opens_a_table_then_fills_the_oldest(store: Store) -> None:
    first = await store.quick_join(quick(3), ann := sitter("Ann"), NOW, T, "me")
    assert first is not None and first.seat == 0 and not first.start
    assert first.record.id == first.table_id and first.record.version == 1
    second = await store.quick_join(quick(3), sitter("Bob"), NOW + 5, T, "me")
    assert second is not None and second.table_id == first.table_id and second.seat == 1
    third = await store.quick_join(quick(3), sitter("Cy"), NOW + 9, T, "me")
    assert third is not None and third.table_id == first.table_id and third.start
    fourth = await store.quick_join(quick(3), sitter("Di"), NOW + 10, T, "me")
    assert fourth is not None and fourth.table_id != first.table_id and fourth.seat == 0
    record = await store.table(first.table_id)
    assert record is not None
    assert [s.name for s in record.seats] == ["Ann", "Bob", "Cy"]
    assert record.seats[0].token_hash == ann.token_hash
    assert record.public and record.creator_seat == -1
    assert record.status == "starting"  # full: claimed for the one who filled it
    assert await store.seat_of(ann.token_hash) == (first.table_id, 0)


async def test_quick_join_takes_the_oldest_of_several_open_tables(store: Store) -> None:
    older = await store.quick_join(quick(2), sitter("Ann"), NOW, T, "me")
    assert older is not None
    # Claiming and releasing the older table puts it back behind nothing: it is still oldest.
    assert await store.claim(older.table_id, "x", NOW + 1, T)
    newer = await store.quick_join(quick(2), sitter("Bob"), NOW + 2, T, "me")
    assert newer is not None and newer.table_id != older.table_id
    assert await store.release(older.table_id, "x", NOW + 3, "wait", T) == "waiting"
    joined = await store.quick_join(quick(2), sitter("Cy"), NOW + 4, T, "me")
    assert joined is not None and joined.table_id == older.table_id


async def test_quick_join_keeps_player_counts_apart(store: Store) -> None:
    two = await store.quick_join(quick(2), sitter("Ann"), NOW, T, "me")
    four = await store.quick_join(quick(4), sitter("Bob"), NOW, T, "me")
    assert two is not None and four is not None and two.table_id != four.table_id
    record = await store.table(four.table_id)
    assert record is not None and record.rules.players == 4 and len(record.seats) == 4


async def test_a_second_human_shortens_the_fill_timer(store: Store) -> None:
    first = await store.quick_join(quick(4), sitter("Ann"), NOW, T, "me")
    assert first is not None
    record = await store.table(first.table_id)
    assert record is not None and record.fill_deadline_ms == NOW + T.fill_lone_ms
    await store.quick_join(quick(4), sitter("Bob"), NOW + 2_000, T, "me")
    record = await store.table(first.table_id)
    assert record is not None and record.fill_deadline_ms == NOW + 2_000 + T.fill_ms
    # The timer never moves later: a second human late in the lone wait keeps it.
    late = await store.quick_join(quick(3), sitter("Cy"), NOW, T, "me")
    assert late is not None
    await store.quick_join(quick(3), sitter("Di"), NOW + 25_000, T, "me")
    record = await store.table(late.table_id)
    assert record is not None and record.fill_deadline_ms == NOW + T.fill_lone_ms


async def test_tables_are_due_when_their_fill_timer_runs_out(store: Store) -> None:
    placed = await store.quick_join(quick(4), sitter("Ann"), NOW, T, "me")
    assert placed is not None
    assert await store.claim_due("a", NOW + T.fill_lone_ms - 1, 10, T) == []
    assert await store.claim_due("a", NOW + T.fill_lone_ms, 10, T) == [placed.table_id]
    record = await store.table(placed.table_id)
    assert record is not None and record.status == "starting" and record.lobby_status == "waiting"
    # A claimed table takes no one else: the next player opens a new table.
    other = await store.quick_join(quick(4), sitter("Bob"), NOW + T.fill_lone_ms, T, "me")
    assert other is not None and other.table_id != placed.table_id


async def test_a_start_is_claimed_once(stores: Callable[[], Store]) -> None:
    replicas = [stores() for _ in range(4)]
    placed = await replicas[0].quick_join(quick(2), sitter("Ann"), NOW, T, "me")
    assert placed is not None
    later = NOW + T.fill_lone_ms
    claims = await asyncio.gather(
        *(s.claim_due(f"owner{i}", later, 10, T) for i, s in enumerate(replicas)),
        *(s.claim(placed.table_id, f"other{i}", later, T) for i, s in enumerate(replicas)),
    )
    wins = [c for c in claims if c]
    assert len(wins) == 1


async def test_an_expired_claim_is_taken_over_and_the_old_owner_cannot_finish(
    store: Store,
) -> None:
    placed = await store.quick_join(quick(2), sitter("Ann"), NOW, T, "me")
    assert placed is not None and await store.claim(placed.table_id, "dead", NOW, T)
    assert await store.claim_due("live", NOW + T.claim_ms - 1, 10, T) == []
    assert await store.claim_due("live", NOW + T.claim_ms, 10, T) == [placed.table_id]
    assert not await store.finish(placed.table_id, "dead", "10.0.0.1:1", [(1, "Bot Ada")], T)
    assert await store.release(placed.table_id, "dead", NOW, "close", T) == "lost"
    started = await store.finish(placed.table_id, "live", "10.0.0.2:2", [(1, "Bot Ada")], T)
    assert started == await store.table(placed.table_id)
    record = started
    assert record is not None and record.status == "started"
    assert record.replica == "10.0.0.2:2"
    assert [(s.name, s.bot) for s in record.seats] == [("Ann", False), ("Bot Ada", True)]
    assert await store.claim_due("late", NOW + 10 * T.claim_ms, 10, T) == []


async def test_a_failed_start_retries_then_closes(store: Store) -> None:
    placed = await store.quick_join(quick(2), sitter("Ann"), NOW, T, "me")
    assert placed is not None
    now = NOW
    for _ in range(T.max_attempts - 1):
        assert await store.claim(placed.table_id, "me", now, T)
        assert await store.release(placed.table_id, "me", now, "retry", T) == "waiting"
        assert await store.claim_due("me", now + T.retry_ms - 1, 10, T) == []
        now += T.retry_ms
    assert await store.claim_due("me", now, 10, T) == [placed.table_id]
    assert await store.release(placed.table_id, "me", now, "retry", T) == "closed"
    record = await store.table(placed.table_id)
    assert record is not None and record.status == "closed"
    assert await store.claim_due("me", now + 10 * T.claim_ms, 10, T) == []


async def test_a_released_quick_table_takes_players_again(store: Store) -> None:
    placed = await store.quick_join(quick(2), sitter("Ann"), NOW, T, "me")
    assert placed is not None and await store.claim(placed.table_id, "me", NOW, T)
    assert await store.release(placed.table_id, "me", NOW, "retry", T) == "waiting"
    joined = await store.quick_join(quick(2), sitter("Bob"), NOW + 1, T, "me")
    assert joined is not None and joined.table_id == placed.table_id and joined.start


async def test_a_taken_code_is_never_handed_out_again(store: Store) -> None:
    first = private(code="SAMECD")
    assert await store.create_private(first, sitter("Ann"), NOW, T, None) is not None
    assert await store.create_private(private(code="SAMECD"), sitter("Bob"), NOW, T, None) is None
    assert await store.quick_join(quick(2, code="SAMECD"), sitter("Cy"), NOW, T, "me") is None
    assert await store.table_by_code("SAMECD") == first.id
    joined = await store.join_code("SAMECD", sitter("Di"), NOW, T, "me")
    assert joined.table_id == first.id and joined.seat == 1


async def test_join_by_code_fills_seats_then_refuses(store: Store) -> None:
    table = private(players=3)
    await store.create_private(table, sitter("Ann"), NOW, T, None)
    assert (await store.join_code(table.code, sitter("Bob"), NOW, T, "me")).seat == 1
    last = await store.join_code(table.code, sitter("Cy"), NOW, T, "me")
    assert last.seat == 2 and last.start
    with pytest.raises(ServiceError) as caught:
        await store.join_code(table.code, sitter("Di"), NOW, T, "me")
    assert caught.value.code == "already_started"  # claimed: starting
    # A start that found no replica leaves the table full and waiting.
    assert await store.release(table.id, "me", NOW, "retry", T) == "waiting"
    with pytest.raises(ServiceError) as caught:
        await store.join_code(table.code, sitter("Di"), NOW, T, "me")
    assert caught.value.code == "table_full"


async def test_join_by_code_refuses_unknown_and_public_codes(store: Store) -> None:
    with pytest.raises(ServiceError) as caught:
        await store.join_code("ZZZZZZ", sitter("Ann"), NOW, T, "me")
    assert caught.value.code == "no_code"
    public = quick(2)
    await store.quick_join(public, sitter("Ann"), NOW, T, "me")
    with pytest.raises(ServiceError) as caught:
        await store.join_code(public.code, sitter("Bob"), NOW, T, "me")
    assert caught.value.code == "no_code"


async def test_start_now_tables_are_claimed_at_once(store: Store) -> None:
    table = private(players=4)
    placed = await store.create_private(table, sitter("Ann"), NOW, T, "me")
    assert placed is not None and placed.start
    record = await store.table(table.id)
    assert record is not None and record.status == "starting"
    assert await store.claim_due("other", NOW + T.claim_ms - 1, 10, T) == []
    assert await store.finish(table.id, "me", "10.0.0.1:1", [], T)


async def test_a_creator_who_leaves_closes_the_table(store: Store) -> None:
    table = private(players=3)
    creator = sitter("Ann")
    await store.create_private(table, creator, NOW, T, None)
    joiner = sitter("Bob")
    await store.join_code(table.code, joiner, NOW, T, "me")
    left = await store.leave(creator.token_hash, NOW, T)
    assert (left.id, left.status) == (table.id, "closed")
    record = await store.table(table.id)
    assert record is not None and record.status == "closed"
    assert await store.table_by_code(table.code) is None
    assert await store.seat_of(creator.token_hash) is None
    assert await store.seat_of(joiner.token_hash) == (table.id, 1)
    with pytest.raises(ServiceError) as caught:
        await store.join_code(table.code, sitter("Cy"), NOW, T, "me")
    assert caught.value.code == "no_code"
    assert (await store.leave(joiner.token_hash, NOW, T)).status == "closed"  # no-op now


async def test_a_joiner_who_leaves_frees_the_seat(store: Store) -> None:
    table = private(players=3)
    await store.create_private(table, sitter("Ann"), NOW, T, None)
    joiner = sitter("Bob")
    assert not (await store.join_code(table.code, joiner, NOW, T, "me")).start
    await store.leave(joiner.token_hash, NOW, T)
    record = await store.table(table.id)
    assert record is not None and record.status == "waiting"
    assert [s.taken for s in record.seats] == [True, False, False]
    assert await store.claim_due("me", NOW + 10**9, 10, T) == []  # private: no fill timer
    assert (await store.join_code(table.code, sitter("Cy"), NOW, T, "me")).seat == 1
    with pytest.raises(ServiceError) as caught:
        await store.leave(joiner.token_hash, NOW, T)
    assert caught.value.code == "bad_token"


async def test_leaving_a_quick_table_reopens_the_seat_and_the_last_human_closes_it(
    store: Store,
) -> None:
    ann, bob = sitter("Ann"), sitter("Bob")
    placed = await store.quick_join(quick(3), ann, NOW, T, "me")
    assert placed is not None
    assert (await store.quick_join(quick(3), bob, NOW, T, "me")) is not None
    await store.leave(ann.token_hash, NOW, T)
    again = await store.quick_join(quick(3), cy := sitter("Cy"), NOW, T, "me")
    assert again is not None and again.table_id == placed.table_id and again.seat == 0
    record = await store.table(placed.table_id)
    assert record is not None and [s.name for s in record.seats] == ["Cy", "Bob", ""]
    await store.leave(bob.token_hash, NOW, T)
    await store.leave(cy.token_hash, NOW, T)
    record = await store.table(placed.table_id)
    assert record is not None and record.status == "closed"
    fresh = await store.quick_join(quick(3), sitter("Di"), NOW, T, "me")
    assert fresh is not None and fresh.table_id != placed.table_id


async def test_leaving_after_the_start_is_refused(store: Store) -> None:
    ann = sitter("Ann")
    placed = await store.create_private(private(), ann, NOW, T, "me")
    assert placed is not None and placed.start
    with pytest.raises(ServiceError) as caught:
        await store.leave(ann.token_hash, NOW, T)
    assert caught.value.code == "already_started"
    assert await store.finish(placed.table_id, "me", "10.0.0.1:1", [(1, "Bot Ada")], T)
    with pytest.raises(ServiceError) as caught:
        await store.leave(ann.token_hash, NOW, T)
    assert caught.value.code == "already_started"


async def test_changes_name_each_changed_table(stores: Callable[[], Store]) -> None:
    watcher, writer = stores(), stores()
    changes = watcher.changes()
    assert await anext(changes) == ""  # subscribed
    placed = await writer.quick_join(quick(2), sitter("Ann"), NOW, T, "me")
    assert placed is not None
    assert await asyncio.wait_for(anext(changes), 5) == placed.table_id
    await writer.quick_join(quick(2), sitter("Bob"), NOW, T, "me")
    assert await asyncio.wait_for(anext(changes), 5) == placed.table_id
    await changes.aclose()  # type: ignore[attr-defined]


async def test_a_rematch_reserves_every_seat_and_starts_once_every_human_answered(
    store: Store,
) -> None:
    old = "t" + "0" * 16
    seats = [("Ann", False), ("Bot Ada", True), ("Bob", False)]
    table = NewTable(new_table_id(), "RMATCH", False, Rules(players=3), "hard", -1, True)
    ann, bob = sitter("Ann"), sitter("Bob")
    assert await store.rematch_of(old) is None
    taken = NewTable(new_table_id(), "RMATCH", False, Rules(players=3), "hard", -1)
    await store.create_private(private(code="RMATCH"), sitter("Cy"), NOW, T, None)
    assert await store.rematch(old, taken, seats, 0, ann, NOW, T, "me") is None  # code taken
    other = NewTable(new_table_id(), "RMATC2", False, Rules(players=3), "hard", -1, True)
    first = await store.rematch(old, other, seats, 0, ann, NOW, T, "me")
    assert first is not None and (first.table_id, first.seat, first.start) == (other.id, 0, False)
    assert await store.rematch_of(old) == other.id
    record = first.record
    assert [(s.name, s.bot, s.reserved) for s in record.seats] == [
        ("Ann", False, False),
        ("Bot Ada", True, False),
        ("Bob", False, True),
    ]
    assert record.spectators and record.creator_seat == -1 and not record.public
    assert record.fill_deadline_ms == NOW + T.rematch_ms
    with pytest.raises(ServiceError) as caught:  # every seat is kept for its player
        await store.join_code(other.code, sitter("Eve"), NOW, T, "me")
    assert caught.value.code == "table_full"
    again = await store.rematch(old, table, seats, 2, bob, NOW + 5, T, "me")
    assert again is not None and (again.table_id, again.seat, again.start) == (other.id, 2, True)
    assert await store.seat_of(bob.token_hash) == (other.id, 2)
    with pytest.raises(ServiceError) as caught:
        await store.rematch(old, table, seats, 0, sitter("Ann"), NOW + 6, T, "me")
    assert caught.value.code == "already_started"


async def test_a_rematch_is_due_after_its_wait_and_a_second_ask_takes_the_newer_token(
    store: Store,
) -> None:
    old = "t" + "1" * 16
    seats = [("Ann", False), ("Bob", False)]
    first, second = sitter("Ann"), sitter("Ann")
    table = NewTable(new_table_id(), "RMATC3", False, Rules(players=2), "easy", -1)
    placed = await store.rematch(old, table, seats, 0, first, NOW, T, "me")
    assert placed is not None
    asked = await store.rematch(old, table, seats, 0, second, NOW + 1, T, "me")
    assert asked is not None and asked.table_id == table.id and not asked.start
    assert await store.seat_of(first.token_hash) is None
    assert await store.seat_of(second.token_hash) == (table.id, 0)
    assert await store.claim_due("me", NOW + T.rematch_ms - 1, 10, T) == []
    assert await store.claim_due("me", NOW + T.rematch_ms, 10, T) == [table.id]


async def test_players_asking_for_a_rematch_at_once_meet_at_one_table(
    stores: Callable[[], Store],
) -> None:
    old = "t" + "2" * 16
    seats = [("Ann", False), ("Bob", False), ("Cy", False)]
    asks = [
        NewTable(new_table_id(), code, False, Rules(players=3), "easy", -1)
        for code in ("RMAT4A", "RMAT4B", "RMAT4C")
    ]
    sitters = [sitter(name) for name, _ in seats]
    replicas = [stores() for _ in seats]
    placed = await asyncio.gather(
        *(
            replica.rematch(old, asks[i], seats, i, sitters[i], NOW, T, f"owner{i}")
            for i, replica in enumerate(replicas)
        )
    )
    assert all(p is not None for p in placed)
    [rematch_id] = {p.table_id for p in placed if p is not None}
    assert sum(p.start for p in placed if p is not None) == 1  # the last to answer claims it
    record = await replicas[0].table(rematch_id)
    assert record is not None and record.status == "starting"
    assert [s.token_hash for s in record.seats] == [s.token_hash for s in sitters]
    assert await replicas[1].rematch_of(old) == rematch_id
    # One code held, by the rematch; the codes of the asks that came second are free.
    found = [await replicas[2].table_by_code(t.code) for t in asks]
    assert found.count(rematch_id) == 1 and found.count(None) == 2
