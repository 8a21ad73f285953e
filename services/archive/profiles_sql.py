"""The profile store's statements and rows, shared by both backends.

The statements are written once, with ``?`` placeholders (SQLite's); ``postgres()``
spells them with ``%s`` for psycopg. What a finished match changes is worked out here
too, from the rows ``apply_result`` locked (``plan``), so the backends only run it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.archive.profiles import (
    DailyEntry,
    HistoryEntry,
    MatchResult,
    Profile,
    SeatResult,
)
from services.profiles import ratings, stats

__all__ = ["Plan", "daily_entry", "history_entry", "new_profile", "plan", "postgres", "profile"]

COLUMNS = "id, name, public, created_ms, mu, sigma, stats"
INSERT_PROFILE = (
    "INSERT INTO profiles (id, name, public, created_ms, mu, sigma, rating, provisional, stats)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING"
)
INSERT_KEY = "INSERT INTO profile_keys (key_hash, profile_id, created_ms) VALUES (?, ?, ?)"
PROFILE = f"SELECT {COLUMNS} FROM profiles WHERE id = ?"
PROFILE_BY_KEY = (
    f"SELECT {', '.join('p.' + c for c in COLUMNS.split(', '))} FROM profile_keys k"
    " JOIN profiles p ON p.id = k.profile_id WHERE k.key_hash = ?"
)
UPDATE_PROFILE = (
    "UPDATE profiles SET name = COALESCE(?, name), public = COALESCE(?, public)"
    f" WHERE id = ? RETURNING {COLUMNS}"
)
EXISTS = "SELECT 1 FROM profiles WHERE id = ?"
DROP_EXPIRED_CODES = "DELETE FROM link_codes WHERE expires_ms <= ?"
INSERT_CODE = "INSERT INTO link_codes (code_hash, profile_id, expires_ms) VALUES (?, ?, ?)"
TAKE_CODE = "DELETE FROM link_codes WHERE code_hash = ? RETURNING profile_id, expires_ms"
FORGET = (
    "DELETE FROM profile_keys WHERE profile_id = ?",
    "DELETE FROM link_codes WHERE profile_id = ?",
    "DELETE FROM profile_history WHERE profile_id = ?",
    "DELETE FROM daily_entries WHERE profile_id = ?",
)
DELETE_PROFILE = "DELETE FROM profiles WHERE id = ?"
CLAIM_RESULT = (
    "INSERT INTO applied_results (table_id, applied_ms) VALUES (?, ?)"
    " ON CONFLICT (table_id) DO NOTHING"
)
UPDATE_PLAYED = (
    "UPDATE profiles SET mu = ?, sigma = ?, rating = ?, provisional = ?, stats = ? WHERE id = ?"
)
INSERT_HISTORY = (
    "INSERT INTO profile_history (profile_id, table_id, finished_at_ms, players, seat, score,"
    " place, rated, rating_before, rating_after) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
PRUNE_HISTORY = (
    "DELETE FROM profile_history WHERE profile_id = ? AND table_id NOT IN (SELECT table_id"
    " FROM profile_history WHERE profile_id = ? ORDER BY finished_at_ms DESC, table_id DESC"
    " LIMIT ?)"
)
FINISH_DAILY = (
    "INSERT INTO daily_entries (day, profile_id, started_ms, finished, table_id, score,"
    " own_turns, won) VALUES (?, ?, ?, TRUE, ?, ?, ?, ?) ON CONFLICT (day, profile_id) DO UPDATE"
    " SET finished = TRUE, table_id = excluded.table_id, score = excluded.score,"
    " own_turns = excluded.own_turns, won = excluded.won WHERE NOT daily_entries.finished"
)
HISTORY = (
    "SELECT table_id, finished_at_ms, players, seat, score, place, rated, rating_before,"
    " rating_after FROM profile_history WHERE profile_id = ?"
    " ORDER BY finished_at_ms DESC, table_id DESC LIMIT ?"
)
# The leaderboard's WHERE is its partial index's (0002_profiles.py): an index read.
LEADERBOARD = (
    "SELECT name, rating FROM profiles WHERE public AND NOT provisional"
    " ORDER BY rating DESC, id LIMIT ?"
)
START_DAILY = (
    "INSERT INTO daily_entries (day, profile_id, started_ms, finished, table_id, score,"
    " own_turns, won) SELECT ?, id, ?, FALSE, '', 0, 0, FALSE FROM profiles WHERE id = ?"
    " ON CONFLICT (day, profile_id) DO NOTHING"
)
CANCEL_DAILY = "DELETE FROM daily_entries WHERE day = ? AND profile_id = ? AND NOT finished"
_DAILY = (
    "SELECT d.day, CASE WHEN p.public THEN p.name ELSE 'Anonymous' END, d.table_id,"
    " d.finished, d.score, d.own_turns, d.won FROM daily_entries d"
    " JOIN profiles p ON p.id = d.profile_id"
)
DAILY_ENTRY = f"{_DAILY} WHERE d.day = ? AND d.profile_id = ?"
DAILY_BOARD = (
    f"{_DAILY} WHERE d.day = ? AND d.finished"
    " ORDER BY d.score DESC, d.own_turns, d.started_ms LIMIT ?"
)
HISTORY_KEPT = 50


def postgres(sql: str) -> str:
    """``sql`` with psycopg's placeholders (no statement here holds a literal ``?`` or ``%``)."""
    return sql.replace("?", "%s")


def live_profiles(count: int, lock: bool) -> str:
    """The rows ``apply_result`` reads (and, ``lock``: locks, in id order) for ``count`` ids."""
    marks = ", ".join("?" * count)
    tail = " FOR UPDATE" if lock else ""
    return f"SELECT id, mu, sigma, stats FROM profiles WHERE id IN ({marks}) ORDER BY id{tail}"


def new_profile(profile_id: str, name: str, now_ms: int) -> tuple[Any, ...]:
    """The ``INSERT_PROFILE`` row of a new profile."""
    mu, sigma = ratings.MU, ratings.SIGMA
    shown = ratings.rating(mu, sigma)
    return (profile_id, name, False, now_ms, mu, sigma, shown.value, shown.provisional, "{}")


def profile(row: Sequence[Any]) -> Profile:
    """A ``COLUMNS`` row as a ``Profile``."""
    profile_id, name, public, created_ms, mu, sigma, stored = row
    return Profile(
        str(profile_id),
        str(name),
        bool(public),
        int(created_ms),
        ratings.rating(float(mu), float(sigma)),
        stats.shown(json.loads(stored)),
    )


def history_entry(row: Sequence[Any]) -> HistoryEntry:
    table_id, finished_at_ms, players, seat, score, place, rated, before, after = row
    return HistoryEntry(
        str(table_id),
        int(finished_at_ms),
        tuple(json.loads(players)),
        int(seat),
        int(score),
        int(place),
        bool(rated),
        None if before is None else int(before),
        None if after is None else int(after),
    )


def daily_entry(row: Sequence[Any]) -> DailyEntry:
    day, name, table_id, finished, score, own_turns, won = row
    return DailyEntry(
        str(day), str(name), str(table_id), bool(finished), int(score), int(own_turns), bool(won)
    )


@dataclass(frozen=True, slots=True)
class Plan:
    """What one match changes: ``UPDATE_PLAYED``, ``INSERT_HISTORY`` and ``FINISH_DAILY``
    rows, and the profiles whose history to prune."""

    played: list[tuple[Any, ...]] = field(default_factory=list)
    history: list[tuple[Any, ...]] = field(default_factory=list)
    daily: list[tuple[Any, ...]] = field(default_factory=list)

    @property
    def profiles(self) -> list[str]:
        return [str(row[-1]) for row in self.played]


def _players(result: MatchResult) -> str:
    return json.dumps(
        [{"seat": s.seat, "name": s.name, "score": s.score, "bot": s.bot} for s in result.seats],
        ensure_ascii=False,
        separators=(",", ":"),
    )


def plan(result: MatchResult, live: Mapping[str, tuple[float, float, str]]) -> Plan:
    """What ``result`` changes for its seats whose profiles are ``live`` (id → mu, sigma,
    stored stats): a forgotten profile's seat is passed over, as a guest's is."""
    rated = ratings.rate(result, {p: (mu, sigma) for p, (mu, sigma, _) in live.items()})
    players = _players(result)
    out = Plan()
    seats: dict[str, SeatResult] = {}
    for seat in result.seats:
        if seat.profile in live and not seat.bot:
            seats.setdefault(seat.profile, seat)
    for profile_id, seat in seats.items():
        mu, sigma, stored = live[profile_id]
        new_mu, new_sigma = rated.get(profile_id, (mu, sigma))
        after = ratings.rating(new_mu, new_sigma)
        counts = stats.add_match(json.loads(stored), result.players, seat)
        out.played.append(
            (
                new_mu,
                new_sigma,
                after.value,
                after.provisional,
                json.dumps(counts, separators=(",", ":")),
                profile_id,
            )
        )
        was_rated = profile_id in rated
        out.history.append(
            (
                profile_id,
                result.table_id,
                result.finished_at_ms,
                players,
                seat.seat,
                seat.score,
                seat.place,
                was_rated,
                ratings.shown(mu) if was_rated else None,
                after.value if was_rated else None,
            )
        )
        if result.daily and not seat.left:  # a leaver's entry stays unfinished: no result
            turns = seat.own_turns
            out.daily.append(
                (result.daily, profile_id, result.finished_at_ms, result.table_id, seat.score,
                 turns, seat.won)
            )  # fmt: skip
    return out
