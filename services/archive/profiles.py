"""The archive's profile store: players who come back (docs/profiles.md).

A profile has no password and no e-mail: it is a random id, a name, and one or more
secret keys (128 bits each, one per linked device) of which the store keeps only the
SHA-256. A finished match's outcome reaches the store once (``apply_result``, exactly once
per table id, every profile's rating, history entry and stats together in one
transaction); history, stats and the leaderboard are read from here. ``forget`` deletes a
profile, its keys, rating, history, link codes and Daily Rack entries for good.

Backends: ``profiles_sqlite.py`` and ``profiles_postgres.py``, on the archive's database
and its migrations (``migrations/versions/0002_profiles.py``). A backend that cannot serve
for now raises ``StoreUnavailable`` (services/common/errors.py), as the record store does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "DailyEntry",
    "HistoryEntry",
    "LeaderboardEntry",
    "MatchResult",
    "Profile",
    "ProfileStore",
    "Rating",
    "SeatResult",
]


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float
    sigma: float
    value: int  # as shown to players (docs/profiles.md, *Ratings*)
    provisional: bool  # its uncertainty is still high


@dataclass(frozen=True, slots=True)
class Profile:
    id: str  # "p" + 16 hex digits; never in a log line
    name: str
    public: bool  # on the leaderboard
    created_ms: int
    rating: Rating
    stats: dict[str, Any]  # the protocol's ``stats`` object (docs/protocol.md)


@dataclass(frozen=True, slots=True)
class SeatResult:
    """One seat of a finished match, as the profile store needs it."""

    seat: int
    name: str
    profile: str  # "" for a seat without a profile (bots always)
    bot: bool
    left: bool  # the human left for good (a leaver of a rated match ranks last)
    score: int  # final score (the side's, with partners)
    place: int  # 1 = first; equal scores share a place; leavers after everyone else
    won: bool  # this seat's side won the match
    rounds_won: int  # rounds this seat went out in (won)
    own_turns_to_go_out: tuple[int, ...]  # per round this seat went out in: its own turns
    best_bonus_run: int  # the longest bonus run it went out with (0: none)
    own_turns: int = 0  # every turn the seat took in the match (the Daily Rack's board)


@dataclass(frozen=True, slots=True)
class MatchResult:
    table_id: str
    finished_at_ms: int
    players: int
    rated: bool
    daily: str  # YYYY-MM-DD for a Daily Rack match, else ""
    seats: tuple[SeatResult, ...]
    # partners: the seats of each side; () = each seat alone
    teams: tuple[tuple[int, ...], ...] = field(default=())


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    table_id: str
    finished_at_ms: int
    players: tuple[dict[str, Any], ...]  # per seat: {"seat", "name", "score", "bot"}
    seat: int
    score: int
    place: int
    rated: bool
    rating_before: int | None  # shown values; None for an unrated match
    rating_after: int | None


@dataclass(frozen=True, slots=True)
class LeaderboardEntry:
    name: str
    rating: int


@dataclass(frozen=True, slots=True)
class DailyEntry:
    day: str
    name: str  # the profile's name if it is public, else "Anonymous"
    table_id: str  # "" until the match finished
    finished: bool
    score: int
    own_turns: int
    won: bool


class ProfileStore(Protocol):
    async def create_profile(self, name: str, key_hash: bytes, now_ms: int) -> Profile:
        """A new profile whose (first) key hashes to ``key_hash``."""
        ...

    async def profile_by_key(self, key_hash: bytes) -> Profile | None:
        """The profile a key opens; None for a wrong or forgotten key."""
        ...

    async def profile(self, profile_id: str) -> Profile | None: ...

    async def update_profile(
        self, profile_id: str, *, name: str | None = None, public: bool | None = None
    ) -> Profile | None:
        """Rename, or opt in or out of the leaderboard; None if the profile is gone."""
        ...

    async def add_key(self, profile_id: str, key_hash: bytes, now_ms: int) -> bool:
        """Another device's key for the profile; False if the profile is gone."""
        ...

    async def put_link_code(self, code_hash: bytes, profile_id: str, expires_ms: int) -> None:
        """A one-time link code (its hash) for the profile, until ``expires_ms``."""
        ...

    async def take_link_code(self, code_hash: bytes, now_ms: int) -> str | None:
        """The profile id of an unexpired link code, deleting the code (once only)."""
        ...

    async def forget(self, profile_id: str) -> bool:
        """Delete the profile and everything of it; False if it was already gone."""
        ...

    async def apply_result(self, result: MatchResult) -> bool:
        """The match's ratings (when rated), history entries, stats and Daily Rack entry
        for every profiled seat, in one transaction, once per table id: True if this call
        applied it, False if it had been (also across racing callers)."""
        ...

    async def history(self, profile_id: str, limit: int = 50) -> list[HistoryEntry]:
        """The profile's last ``limit`` matches, newest first."""
        ...

    async def leaderboard(self, limit: int = 100) -> list[LeaderboardEntry]:
        """Public profiles with an established rating, best first (an index read)."""
        ...

    async def start_daily(self, day: str, profile_id: str, now_ms: int) -> bool:
        """Claim the profile's one entry of the day, before its table is made; False if it
        has one (``apply_result`` of the day's match fills in the table, score and turns)."""
        ...

    async def cancel_daily(self, day: str, profile_id: str) -> None:
        """Drop an unfinished claim whose table could not be made (nothing else)."""
        ...

    async def daily_entry(self, day: str, profile_id: str) -> DailyEntry | None: ...

    async def daily_board(self, day: str, limit: int = 100) -> list[DailyEntry]:
        """The day's finished entries, best first (score, then fewer own turns)."""
        ...

    async def ping(self) -> None: ...

    async def close(self) -> None: ...
