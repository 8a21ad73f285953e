"""What the store keeps per waiting table, and the one field layout both stores share.

A table is a flat string map (a Redis hash; a dict in the memory store):

``id code pub players rules level creator status created deadline replica ver humans
owner attempts spec rated daily`` (``spec`` "1": open to spectators; private tables only;
``rated`` "1": a private table or rematch made rated, a quick-match table's is worked out
from its seats, ``TableRecord.is_rated``; ``daily`` the Daily Rack's day) and per seat
``n<i>`` (name, empty = free), ``k<i>`` (token hash), ``b<i>`` ("1" for a bot seated at
the start), ``p<i>`` (the human's profile id, if any) and ``r<i>`` (its rating as shown
when it sat down, meaningful only with a profile: quick match seats by level,
docs/matchmaker.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from rackcore import Rules

__all__ = [
    "NewTable",
    "Placed",
    "SeatRecord",
    "Sitter",
    "TableRecord",
    "Timings",
    "new_fields",
]


@lru_cache(maxsize=512)
def _rules(text: str) -> Rules:
    """Rules from their stored JSON; few distinct ones exist, so they are parsed once."""
    return Rules.from_dict(json.loads(text))


@dataclass(frozen=True, slots=True)
class Sitter:
    """A human sitting down: the name shown and the hash of the seat token they got."""

    name: str
    token_hash: str
    profile: str = ""  # the profile playing (docs/profiles.md); "" none
    rating: int = 0  # the profile's rating as shown (0 without a profile)


@dataclass(frozen=True, slots=True)
class NewTable:
    """A table to open (quick match opens one only when no open table has a seat)."""

    id: str
    code: str
    public: bool
    rules: Rules
    level: str
    creator_seat: int  # -1 for quick-match tables
    spectators: bool = False  # anyone with the code may watch (private tables only)
    rated: bool = False  # private tables and rematches: made rated
    daily: str = ""  # the Daily Rack's day (YYYY-MM-DD), or ""

    def rules_json(self) -> str:
        return json.dumps(self.rules.to_dict(full=True), sort_keys=True)


@dataclass(frozen=True, slots=True)
class Placed:
    """Where a sitter landed. ``start``: the caller holds the claim to start the table now
    (it became full, or was made to start at once)."""

    table_id: str
    seat: int
    start: bool
    record: TableRecord  # the table right after the sit-down


@dataclass(frozen=True, slots=True)
class Timings:
    """The durations the store applies, in milliseconds (from the settings)."""

    fill_ms: int = 15_000
    fill_lone_ms: int = 30_000
    lobby_ttl_ms: int = 3_600_000
    token_ttl_ms: int = 86_400_000
    done_ttl_ms: int = 86_400_000
    claim_ms: int = 15_000
    retry_ms: int = 1_000
    max_attempts: int = 30
    rematch_ms: int = 30_000
    # Quick match by level (docs/matchmaker.md): a newcomer with a rating joins an open
    # table whose humans' mean rating is within ``level_window`` plus
    # ``level_widen_per_s`` per second the table has waited, and any table that has
    # waited ``level_open_ms`` or more (0: no window at all).
    level_window: int = 100
    level_widen_per_s: int = 20
    level_open_ms: int = 15_000


@dataclass(frozen=True, slots=True)
class SeatRecord:
    name: str = ""  # empty: free
    token_hash: str = ""
    bot: bool = False
    profile: str = ""
    rating: int = 0

    @property
    def taken(self) -> bool:
        return bool(self.name)

    @property
    def reserved(self) -> bool:
        """A rematch's seat kept for its player, who has not answered yet."""
        return bool(self.name) and not self.token_hash and not self.bot


@dataclass(frozen=True, slots=True)
class TableRecord:
    id: str
    code: str
    public: bool
    rules: Rules
    level: str
    creator_seat: int
    status: str  # waiting | starting | started | closed
    seats: tuple[SeatRecord, ...]
    created_ms: int
    fill_deadline_ms: int
    replica: str
    version: int
    spectators: bool = False
    rated: bool = False  # as stored: a private table or rematch made rated
    daily: str = ""

    @property
    def humans(self) -> int:
        return sum(1 for s in self.seats if s.taken and not s.bot)

    @property
    def is_rated(self) -> bool:
        """Whether the match will be rated: a private table or rematch made so; a quick
        match when two or more humans sit and every human has a profile."""
        if not self.public:
            return self.rated
        humans = [s for s in self.seats if s.taken and not s.bot and not s.reserved]
        return len(humans) >= 2 and all(s.profile for s in humans)

    @property
    def mean_rating(self) -> float | None:
        """The mean rating of the humans seated with a profile; None if none has one."""
        rated = [s.rating for s in self.seats if s.taken and not s.bot and s.profile]
        return sum(rated) / len(rated) if rated else None

    @property
    def full(self) -> bool:
        return all(s.taken for s in self.seats)

    @property
    def lobby_status(self) -> str:
        """What players see: a table being started is still waiting for them."""
        return "waiting" if self.status == "starting" else self.status

    @classmethod
    def from_fields(cls, fields: Mapping[str, str]) -> TableRecord:
        rules = _rules(fields["rules"])
        seats = tuple(
            SeatRecord(
                name=fields.get(f"n{i}", ""),
                token_hash=fields.get(f"k{i}", ""),
                bot=fields.get(f"b{i}", "") == "1",
                profile=fields.get(f"p{i}", ""),
                rating=int(fields.get(f"r{i}", "") or "0"),
            )
            for i in range(rules.players)
        )
        return cls(
            id=fields["id"],
            code=fields["code"],
            public=fields["pub"] == "1",
            rules=rules,
            level=fields["level"],
            creator_seat=int(fields["creator"]),
            status=fields["status"],
            seats=seats,
            created_ms=int(fields["created"]),
            fill_deadline_ms=int(fields.get("deadline", "0")),
            replica=fields.get("replica", ""),
            version=int(fields.get("ver", "0")),
            spectators=fields.get("spec", "0") == "1",
            rated=fields.get("rated", "0") == "1",
            daily=fields.get("daily", ""),
        )


def new_fields(table: NewTable, sitter: Sitter, now_ms: int, deadline_ms: int) -> dict[str, str]:
    """A new table's fields with ``sitter`` in seat 0 (the memory store; Lua mirrors it)."""
    return {
        "id": table.id,
        "code": table.code,
        "pub": "1" if table.public else "0",
        "players": str(table.rules.players),
        "rules": table.rules_json(),
        "level": table.level,
        "creator": str(table.creator_seat),
        "status": "waiting",
        "created": str(now_ms),
        "deadline": str(deadline_ms),
        "replica": "",
        "ver": "0",
        "humans": "1",
        "owner": "",
        "attempts": "0",
        "spec": "1" if table.spectators else "0",
        "rated": "1" if table.rated else "0",
        "daily": table.daily,
        "n0": sitter.name,
        "k0": sitter.token_hash,
        "p0": sitter.profile,
        "r0": str(sitter.rating),
    }
