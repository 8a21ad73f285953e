"""The profile store's contract, on SQLite and PostgreSQL alike (services/archive/profiles.py)."""

from __future__ import annotations

import asyncio
import secrets
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from openskill.models import PlackettLuce
from postgres_engine import Postgres

import services.archive.profiles_sql as profiles_sql
from services.archive import (
    ArchiveSettings,
    MatchResult,
    ProfileStore,
    SeatResult,
    migrate,
    open_profiles,
)
from services.archive.settings import parse_database_url
from services.common.errors import StoreUnavailable
from services.profiles import keys, ratings

NOW = 1_800_000_000_000


@pytest.fixture
async def store(url: str) -> AsyncIterator[ProfileStore]:
    opened = await open_profiles(ArchiveSettings(database_url=url))
    yield opened
    await opened.close()


def _rows(url: str, statement: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """``statement`` run on the database itself, past the store (``?`` placeholders)."""
    parsed = parse_database_url(url)
    if parsed.backend == "sqlite":
        with sqlite3.connect(parsed.path) as db:
            return db.execute(statement, args).fetchall()
    with psycopg.connect(parsed.conninfo, autocommit=True) as connection:
        if not args:
            cursor = connection.execute(statement.encode())
        else:
            cursor = connection.execute(profiles_sql.postgres(statement).encode(), args)
        return cursor.fetchall() if cursor.description else []


async def _new(store: ProfileStore, name: str = "Player") -> tuple[str, bytes]:
    """A new profile: its id and its key's hash."""
    key_hash = keys.hash_key(keys.new_key())
    made = await store.create_profile(name, key_hash, NOW)
    return made.id, key_hash


def _seat(
    seat: int, profile: str, score: int, *, left: bool = False, bot: bool = False, **more: Any
) -> SeatResult:
    return SeatResult(
        seat=seat,
        name=more.get("name", f"seat{seat}"),
        profile=profile,
        bot=bot,
        left=left,
        score=score,
        place=more.get("place", 1),
        won=more.get("won", False),
        rounds_won=more.get("rounds_won", 0),
        own_turns_to_go_out=more.get("turns", ()),
        best_bonus_run=more.get("run", 0),
        own_turns=more.get("own_turns", sum(more.get("turns", ()))),
    )


def _result(*seats: SeatResult, rated: bool = True, daily: str = "", at: int = NOW) -> MatchResult:
    return MatchResult(f"t{secrets.token_hex(8)}", at, len(seats), rated, daily, tuple(seats))


async def _mu_sigma(store: ProfileStore, profile_id: str) -> tuple[float, float]:
    found = await store.profile(profile_id)
    assert found is not None
    return found.rating.mu, found.rating.sigma


# -- profiles and keys


async def test_a_new_profile_opens_with_its_key_and_no_other(store: ProfileStore) -> None:
    key_hash = keys.hash_key(keys.new_key())
    made = await store.create_profile("Ada", key_hash, NOW)
    assert keys.is_profile_id(made.id)
    assert (made.name, made.public, made.created_ms) == ("Ada", False, NOW)
    assert (made.rating.value, made.rating.provisional) == (1500, True)
    assert made.stats == {
        "played": 0,
        "won": 0,
        "rounds_won": 0,
        "mean_own_turns_to_go_out": None,
        "best_bonus_run": 0,
        "by_players": {},
    }
    assert await store.profile_by_key(key_hash) == made
    assert await store.profile(made.id) == made
    assert await store.profile_by_key(keys.hash_key(keys.new_key())) is None
    assert await store.profile("p0000000000000000") is None


async def test_a_profile_is_renamed_and_opts_in_and_out(store: ProfileStore) -> None:
    profile_id, _ = await _new(store)
    renamed = await store.update_profile(profile_id, name="Grace")
    assert renamed is not None and (renamed.name, renamed.public) == ("Grace", False)
    public = await store.update_profile(profile_id, public=True)
    assert public is not None and (public.name, public.public) == ("Grace", True)
    both = await store.update_profile(profile_id, name="G", public=False)
    assert both is not None and (both.name, both.public) == ("G", False)
    assert await store.update_profile("p0000000000000000", name="x") is None


async def test_a_second_device_has_a_key_of_its_own(store: ProfileStore) -> None:
    profile_id, first = await _new(store)
    second = keys.hash_key(keys.new_key())
    assert await store.add_key(profile_id, second, NOW) is True
    opened = [await store.profile_by_key(k) for k in (first, second)]
    assert [p.id if p else None for p in opened] == [profile_id, profile_id]
    assert await store.add_key("p0000000000000000", keys.hash_key("x"), NOW) is False


async def test_a_link_code_is_taken_once_and_only_before_it_expires(store: ProfileStore) -> None:
    profile_id, _ = await _new(store)
    code = keys.hash_link_code(keys.new_link_code())
    await store.put_link_code(code, profile_id, NOW + keys.LINK_CODE_TTL_MS)
    assert await store.take_link_code(code, NOW) == profile_id
    assert await store.take_link_code(code, NOW) is None  # one-time
    late = keys.hash_link_code(keys.new_link_code())
    await store.put_link_code(late, profile_id, NOW + 1_000)
    assert await store.take_link_code(late, NOW + 1_000) is None  # expired
    assert await store.take_link_code(late, NOW) is None  # and gone


async def test_racing_redeemers_of_a_link_code_one_gets_it(url: str, store: ProfileStore) -> None:
    profile_id, _ = await _new(store)
    others = [await open_profiles(ArchiveSettings(database_url=url)) for _ in range(4)]
    try:
        code = keys.hash_link_code(keys.new_link_code())
        await store.put_link_code(code, profile_id, NOW + keys.LINK_CODE_TTL_MS)
        got = await asyncio.gather(*(o.take_link_code(code, NOW) for o in others))
        assert sorted(got, key=bool) == [None, None, None, profile_id]
    finally:
        for other in others:
            await other.close()


def _tables(url: str) -> list[str]:
    parsed = parse_database_url(url)
    if parsed.backend == "sqlite":
        found = _rows(url, "SELECT name FROM sqlite_master WHERE type = 'table'")
    else:
        found = _rows(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    return sorted(str(row[0]) for row in found)


def _holding(url: str, needles: list[bytes]) -> list[str]:
    """Every table (and column value) of the database that holds one of ``needles``."""
    found = []
    for table in _tables(url):
        for row in _rows(url, f"SELECT * FROM {table}"):
            for value in row:
                raw = value.encode() if isinstance(value, str) else value
                if isinstance(raw, bytes | memoryview):
                    raw = bytes(raw)
                    found += [f"{table}: {raw!r}" for needle in needles if needle in raw]
    return found


async def test_forget_leaves_nothing_of_the_profile(url: str, store: ProfileStore) -> None:
    profile_id, key_hash = await _new(store, "Forgotten")
    other, _ = await _new(store)
    second_key = keys.hash_key(keys.new_key())
    await store.add_key(profile_id, second_key, NOW)
    code = keys.hash_link_code(keys.new_link_code())
    await store.put_link_code(code, profile_id, NOW + keys.LINK_CODE_TTL_MS)
    await store.update_profile(profile_id, public=True)
    assert await store.start_daily("2027-01-01", profile_id, NOW)
    await store.apply_result(_result(_seat(0, profile_id, 500), _seat(1, other, 200)))
    daily = _result(_seat(0, profile_id, 300), _seat(1, "", 500, bot=True), daily="2027-01-01")
    await store.apply_result(daily)
    needles = [profile_id.encode(), key_hash, second_key, code]
    assert _holding(url, needles)  # it is there, where the scan looks

    assert await store.forget(profile_id) is True
    assert _holding(url, needles) == []
    assert await store.profile_by_key(key_hash) is None
    assert await store.profile_by_key(second_key) is None
    assert await store.profile(profile_id) is None
    assert await store.history(profile_id) == []
    assert await store.take_link_code(code, NOW) is None
    assert await store.forget(profile_id) is False
    assert [h.seat for h in await store.history(other)] == [1]  # the other's own, kept


# -- results


async def test_a_rated_match_moves_ratings_as_the_library_does(store: ProfileStore) -> None:
    a, _ = await _new(store)
    b, _ = await _new(store)
    c, _ = await _new(store)
    model = PlackettLuce()
    first = _result(_seat(0, a, 500), _seat(1, b, 300), _seat(2, c, 300))
    assert await store.apply_result(first) is True
    want = model.rate([[model.rating()] for _ in range(3)], ranks=[1, 2, 2])
    for profile_id, team in zip((a, b, c), want, strict=True):
        assert await _mu_sigma(store, profile_id) == pytest.approx((team[0].mu, team[0].sigma))
    # a second match from those ratings; a bot between them is no rated player, a leaver is last
    before = {p: await _mu_sigma(store, p) for p in (a, b, c)}
    second = _result(
        _seat(0, a, 100, left=True),
        _seat(1, "", 900, bot=True),
        _seat(2, b, 200),
        _seat(3, c, 600),
    )
    assert await store.apply_result(second) is True
    teams = [[model.rating(*before[p])] for p in (a, b, c)]
    want = model.rate(teams, ranks=[3, 2, 1])
    for profile_id, team in zip((a, b, c), want, strict=True):
        assert await _mu_sigma(store, profile_id) == pytest.approx((team[0].mu, team[0].sigma))
    shown = await store.profile(c)
    assert shown is not None and shown.rating == ratings.rating(*before[c]).__class__(
        want[2][0].mu, want[2][0].sigma, round(60 * want[2][0].mu), True
    )


async def test_a_result_applies_once_and_its_retry_changes_nothing(store: ProfileStore) -> None:
    a, _ = await _new(store)
    b, _ = await _new(store)
    result = _result(_seat(0, a, 500, won=True), _seat(1, b, 100))
    assert await store.apply_result(result) is True
    after = [await store.profile(p) for p in (a, b)]
    assert await store.apply_result(result) is False
    assert [await store.profile(p) for p in (a, b)] == after
    assert [len(await store.history(p)) for p in (a, b)] == [1, 1]


async def test_of_racing_appliers_on_their_own_connections_one_applies(url: str) -> None:
    stores = [await open_profiles(ArchiveSettings(database_url=url)) for _ in range(6)]
    try:
        a, _ = await _new(stores[0])
        b, _ = await _new(stores[0])
        model = PlackettLuce()
        want = [model.rating(), model.rating()]
        for _ in range(5):  # a few matches, each applied by every store at once
            result = _result(_seat(0, a, 500), _seat(1, b, 100))
            won = await asyncio.gather(*(store.apply_result(result) for store in stores))
            assert won.count(True) == 1
            want = [team[0] for team in model.rate([[r] for r in want], ranks=[1, 2])]
            for store in stores:
                for profile_id, rating in zip((a, b), want, strict=True):
                    got = await _mu_sigma(store, profile_id)
                    assert got == pytest.approx((rating.mu, rating.sigma))
        assert [len(await stores[1].history(p)) for p in (a, b)] == [5, 5]
    finally:
        for store in stores:
            await store.close()


async def test_a_match_that_fails_midway_leaves_nothing(url: str, store: ProfileStore) -> None:
    a, _ = await _new(store)
    b, _ = await _new(store)
    assert await store.start_daily("2027-01-02", a, NOW)
    result = _result(_seat(0, a, 500, won=True), _seat(1, b, 100), daily="2027-01-02")
    before = [await store.profile(p) for p in (a, b)]
    with pytest.MonkeyPatch.context() as patch:  # fails after ratings, stats, history, daily
        patch.setattr(
            profiles_sql,
            "PRUNE_HISTORY",
            "DELETE FROM no_such_table WHERE a = ? AND b = ? AND c = ?",
        )
        with pytest.raises((sqlite3.OperationalError, psycopg.errors.UndefinedTable)):
            await store.apply_result(result)
    assert [await store.profile(p) for p in (a, b)] == before
    assert [await store.history(p) for p in (a, b)] == [[], []]
    assert _rows(url, "SELECT * FROM applied_results") == []
    entry = await store.daily_entry("2027-01-02", a)
    assert entry is not None and not entry.finished
    assert await store.apply_result(result) is True  # and it applies, whole, after
    assert [len(await store.history(p)) for p in (a, b)] == [1, 1]


async def test_a_forgotten_profile_is_passed_over(store: ProfileStore) -> None:
    a, _ = await _new(store)
    b, _ = await _new(store)
    gone, _ = await _new(store)
    await store.forget(gone)
    three = _result(_seat(0, a, 500), _seat(1, gone, 400), _seat(2, b, 300))
    assert await store.apply_result(three) is True
    model = PlackettLuce()
    want = model.rate([[model.rating()], [model.rating()]], ranks=[1, 2])  # a and b alone
    assert await _mu_sigma(store, a) == pytest.approx((want[0][0].mu, want[0][0].sigma))
    assert await _mu_sigma(store, b) == pytest.approx((want[1][0].mu, want[1][0].sigma))
    assert await store.profile(gone) is None and await store.history(gone) == []
    # with one live rated player left, the match is not rated, but still counted
    two = _result(_seat(0, a, 500, won=True), _seat(1, gone, 100), at=NOW + 1)
    before = await _mu_sigma(store, a)
    assert await store.apply_result(two) is True
    assert await _mu_sigma(store, a) == before
    newest = (await store.history(a))[0]
    assert (newest.rated, newest.rating_before, newest.rating_after) == (False, None, None)


async def test_history_and_stats_of_a_match(store: ProfileStore) -> None:
    a, _ = await _new(store)
    b, _ = await _new(store)
    result = _result(
        _seat(0, a, 520, name="Ada", place=1, won=True, rounds_won=3, turns=(7, 9, 8), run=5),
        _seat(1, "", 480, name="Hard bot", bot=True, place=2, rounds_won=1, turns=(6,), run=3),
        _seat(2, b, 300, name="Bo", place=3, turns=()),
    )
    await store.apply_result(result)
    [entry] = await store.history(a)
    assert (entry.table_id, entry.finished_at_ms, entry.seat, entry.score, entry.place) == (
        result.table_id,
        NOW,
        0,
        520,
        1,
    )
    assert entry.players == (
        {"seat": 0, "name": "Ada", "score": 520, "bot": False},
        {"seat": 1, "name": "Hard bot", "score": 480, "bot": True},
        {"seat": 2, "name": "Bo", "score": 300, "bot": False},
    )
    profile = await store.profile(a)
    assert profile is not None
    assert (entry.rated, entry.rating_before, entry.rating_after) == (
        True,
        1500,
        profile.rating.value,
    )
    assert profile.rating.value > 1500
    three = {
        "played": 1,
        "won": 1,
        "rounds_won": 3,
        "mean_own_turns_to_go_out": 8.0,
        "best_bonus_run": 5,
    }
    assert profile.stats == {**three, "by_players": {"3": three}}
    # a 2-player unrated match adds to the totals and to "2"
    two = _result(
        _seat(0, a, 100, turns=(10,), run=7), _seat(1, b, 500, won=True), rated=False, at=NOW + 1
    )
    await store.apply_result(two)
    profile = await store.profile(a)
    assert profile is not None
    assert profile.stats["played"] == 2 and profile.stats["won"] == 1
    assert profile.stats["mean_own_turns_to_go_out"] == 8.5  # (7 + 9 + 8 + 10) / 4
    assert profile.stats["best_bonus_run"] == 7
    assert profile.stats["by_players"]["2"]["played"] == 1
    newest = (await store.history(a))[0]
    assert (newest.table_id, newest.rated, newest.rating_before) == (two.table_id, False, None)


async def test_history_keeps_the_newest_50(store: ProfileStore) -> None:
    a, _ = await _new(store)
    results = [
        _result(_seat(0, a, 10 * i), _seat(1, "", 0, bot=True), at=NOW + i) for i in range(55)
    ]
    for result in results:
        await store.apply_result(result)
    got = await store.history(a)
    assert [h.table_id for h in got] == [r.table_id for r in reversed(results[5:])]
    assert [h.table_id for h in await store.history(a, limit=3)] == [
        r.table_id for r in reversed(results[52:])
    ]
    profile = await store.profile(a)
    assert profile is not None and profile.stats["played"] == 55  # stats keep counting


# -- the leaderboard


def _established(url: str, profile_id: str, mu: float, sigma: float = 4.0) -> None:
    """Set a profile's rating past the store, as many rated matches would."""
    r = ratings.rating(mu, sigma)
    _rows(
        url,
        "UPDATE profiles SET mu = ?, sigma = ?, rating = ?, provisional = ? WHERE id = ?",
        (mu, sigma, r.value, r.provisional, profile_id),
    )


async def test_the_leaderboard_is_public_established_profiles_best_first(
    url: str, store: ProfileStore
) -> None:
    made = {}
    for name, mu, public, sigma in [
        ("Top", 30.0, True, 4.0),
        ("Hidden", 40.0, False, 4.0),  # not public
        ("New", 35.0, True, 8.0),  # provisional
        ("Second", 28.0, True, 6.0),
        ("Third", 26.0, True, ratings.PROVISIONAL_SIGMA),  # just established
    ]:
        made[name], _ = await _new(store, name)
        _established(url, made[name], mu, sigma)
        await store.update_profile(made[name], public=public)
    board = await store.leaderboard()
    assert [(e.name, e.rating) for e in board] == [("Top", 1800), ("Second", 1680), ("Third", 1560)]
    assert [e.name for e in await store.leaderboard(limit=2)] == ["Top", "Second"]
    await store.update_profile(made["Top"], public=False)
    assert [e.name for e in await store.leaderboard()] == ["Second", "Third"]


def _plan(url: str) -> str:
    parsed = parse_database_url(url)
    if parsed.backend == "sqlite":
        rows = _rows(url, f"EXPLAIN QUERY PLAN {profiles_sql.LEADERBOARD}", (100,))
        return "\n".join(str(row[-1]) for row in rows)
    rows = _rows(url, f"EXPLAIN {profiles_sql.LEADERBOARD}", (100,))
    return "\n".join(str(row[0]) for row in rows)


async def test_the_leaderboard_is_an_index_read(
    backend: str, url: str, store: ProfileStore
) -> None:
    """Of 100,000 profiles, one in ten public and established: the 100 best are read in
    the partial index's order, neither a scan of profiles nor a sort."""
    columns = "id, name, public, created_ms, mu, sigma, rating, provisional, stats"
    if backend == "postgresql":
        _rows(
            url,
            f"INSERT INTO profiles ({columns}) SELECT 'p' || lpad(to_hex(i), 16, '0'), 'n' || i,"
            " i % 10 = 0, 0, 25, 4, (i * 7919) % 3000, i % 10 <> 0, '{}'"
            " FROM generate_series(1, 100000) i",
        )
    else:
        rows = [
            (f"p{i:016x}", f"n{i}", i % 10 == 0, 0, 25.0, 4.0, i * 7919 % 3000, i % 10 != 0, "{}")
            for i in range(1, 100_001)
        ]
        _insert(url, f"INSERT INTO profiles ({columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    _rows(url, "ANALYZE")
    plan = _plan(url)
    print(plan)
    if backend == "postgresql":
        assert "Index Scan using profiles_leaderboard on profiles" in plan
        assert "Seq Scan" not in plan and "Sort" not in plan
    else:
        assert plan == "SCAN profiles USING INDEX profiles_leaderboard"  # no TEMP B-TREE: no sort
    board = await store.leaderboard()
    assert len(board) == 100 and board[0].rating == 2990


def _insert(url: str, statement: str, rows: list[tuple[Any, ...]]) -> None:
    with sqlite3.connect(parse_database_url(url).path) as db:
        db.executemany(statement, rows)


# -- the Daily Rack


async def test_one_daily_entry_a_day_and_its_board(store: ProfileStore) -> None:
    day = "2027-02-03"
    ids = [(await _new(store, name))[0] for name in ("Ann", "Ben", "Cid", "Dee")]
    for profile_id in ids:
        assert await store.start_daily(day, profile_id, NOW) is True
    assert await store.start_daily(day, ids[0], NOW) is False  # one a day
    assert await store.start_daily("2027-02-04", ids[0], NOW) is True  # the next day's
    assert await store.start_daily(day, "p0000000000000000", NOW) is False  # no such profile
    started = await store.daily_entry(day, ids[0])
    assert started is not None
    assert (started.finished, started.table_id, started.name) == (False, "", "Anonymous")
    await store.cancel_daily(day, ids[3])  # its table could not be made
    assert await store.daily_entry(day, ids[3]) is None
    await store.update_profile(ids[1], public=True)
    scores = [(ids[0], 300, 17), (ids[1], 500, 22), (ids[2], 500, 15)]
    results = {}
    for profile_id, score, own_turns in scores:
        results[profile_id] = _result(
            _seat(0, profile_id, score, own_turns=own_turns, won=score > 400),
            _seat(1, "", 400, bot=True),
            daily=day,
        )
        assert await store.apply_result(results[profile_id])
    board = await store.daily_board(day)
    assert [(e.name, e.score, e.own_turns) for e in board] == [
        ("Anonymous", 500, 15),  # fewer own turns first
        ("Ben", 500, 22),
        ("Anonymous", 300, 17),
    ]
    mine = await store.daily_entry(day, ids[0])
    assert mine is not None and (mine.finished, mine.table_id, mine.won) == (
        True,
        results[ids[0]].table_id,
        False,
    )
    await store.cancel_daily(day, ids[0])  # a finished entry stays
    assert await store.daily_entry(day, ids[0]) == mine
    assert await store.start_daily(day, ids[3], NOW) is True  # cancelled: may start again
    # a player who left (the computer finished for them) has no result: off the board
    left = _result(
        _seat(0, ids[3], 600, left=True, own_turns=9), _seat(1, "", 100, bot=True), daily=day
    )
    assert await store.apply_result(left)
    still = await store.daily_entry(day, ids[3])
    assert still is not None and not still.finished
    assert await store.daily_board(day) == board


# -- outages


async def test_an_sqlite_file_locked_past_the_timeout_is_unavailable(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/archive.sqlite3"
    migrate(parse_database_url(url))
    store = await open_profiles(ArchiveSettings(database_url=url, database_timeout_ms=200))
    holder = sqlite3.connect(parse_database_url(url).path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreUnavailable):
            await store.create_profile("x", keys.hash_key(keys.new_key()), NOW)
        holder.execute("ROLLBACK")
        assert (await store.create_profile("x", keys.hash_key(keys.new_key()), NOW)).name == "x"
    finally:
        holder.close()
        await store.close()


async def test_a_stopped_database_is_unavailable_then_served(own_postgres: Postgres) -> None:
    url = own_postgres.database("profiles")
    migrate(parse_database_url(url))
    settings = ArchiveSettings(database_url=url, database_timeout_ms=2_000)
    store = await open_profiles(settings)
    try:
        profile_id, key_hash = await _new(store)
        own_postgres.stop_server()
        with pytest.raises(StoreUnavailable):
            await store.profile_by_key(key_hash)
        with pytest.raises(StoreUnavailable):
            await store.apply_result(_result(_seat(0, profile_id, 1), _seat(1, "", 0, bot=True)))
        own_postgres.start_server()
        for _ in range(150):  # the pool reconnects, backing off
            try:
                found = await store.profile_by_key(key_hash)
                break
            except StoreUnavailable:
                await asyncio.sleep(0.2)
        assert found is not None and found.id == profile_id
        assert await store.history(profile_id) == []  # the failed apply left nothing
    finally:
        await store.close()
