"""What the store keeps per waiting table, and the one field layout both stores share.

A table is a flat string map (a Redis hash; a dict in the memory store):

``id code pub players rules level creator status created deadline replica ver humans
owner attempts spec`` (``spec`` "1": open to spectators; private tables only) and per
seat ``n<i>`` (name, empty = free), ``k<i>`` (token hash), ``b<i>`` ("1" for a bot
seated at the start).
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


@dataclass(frozen=True, slots=True)
class SeatRecord:
    name: str = ""  # empty: free
    token_hash: str = ""
    bot: bool = False

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

    @property
    def humans(self) -> int:
        return sum(1 for s in self.seats if s.taken and not s.bot)

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
        "n0": sitter.name,
        "k0": sitter.token_hash,
    }
