"""The store interface: every matchmaker state change is one atomic operation here.

Two implementations keep one contract (tests/services/matchmaker/test_store.py runs on
both): ``RedisStore`` (Lua scripts, any number of replicas) and ``MemoryStore`` (one
process, for ``rackem up`` without Redis). Refusals are ``ServiceError``s with stable codes.

Table lifecycle: ``waiting`` → ``starting`` (one replica's claim, with an expiry) →
``started``; or → ``closed``. A table is *due* (in the due set, scored by when) once its
fill timer runs out, it is full, or it must start now; a replica claims due tables
atomically, so each start happens once however many replicas look.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Literal, Protocol

from services.matchmaker.records import NewTable, Placed, Sitter, TableRecord, Timings

__all__ = ["ReleaseMode", "Store"]

ReleaseMode = Literal["retry", "wait", "close"]
"""After a failed start: retry later (closed after too many attempts), wait for the
creator to start again, or close the table."""


class Store(Protocol):
    async def quick_join(
        self, table: NewTable, sitter: Sitter, now_ms: int, timings: Timings, owner: str
    ) -> Placed | None:
        """Seat ``sitter`` at the oldest open public table for ``table.rules.players``;
        with none open, open ``table`` (its code allocated ``SET NX``). None: the code was
        taken, try another. A table this makes full is claimed for ``owner`` at once
        (``Placed.start``), so the caller starts it without racing the due loops."""
        ...

    async def create_private(
        self, table: NewTable, sitter: Sitter, now_ms: int, timings: Timings, owner: str | None
    ) -> Placed | None:
        """Open a private table with ``sitter`` as creator in seat 0; with an ``owner`` it
        is claimed for that owner to start at once. None: the code was taken, try another."""
        ...

    async def rematch(
        self,
        old_id: str,
        table: NewTable,
        seats: Sequence[tuple[str, bool]],
        seat: int,
        sitter: Sitter,
        now_ms: int,
        timings: Timings,
        owner: str,
    ) -> Placed | None:
        """Seat ``sitter`` in ``seat`` of the rematch of table ``old_id``; the first to ask
        opens it as ``table`` (every seat reserved with its old name, ``seats``: name, bot;
        due after ``timings.rematch_ms``). A seat asked for again takes the newer token.
        Claimed for ``owner`` once every human seat has answered (``Placed.start``). None:
        the code was taken, try another. ``already_started``, ``no_rematch`` (closed)."""
        ...

    async def rematch_of(self, old_id: str) -> str | None:
        """The id of the rematch of table ``old_id``, once someone asked for it."""
        ...

    async def join_code(
        self, code: str, sitter: Sitter, now_ms: int, timings: Timings, owner: str
    ) -> Placed:
        """Seat ``sitter`` at the private table with ``code`` (a table this makes full is
        claimed for ``owner``): ``no_code``, ``table_full``, ``already_started``."""
        ...

    async def leave(self, token_hash: str, now_ms: int, timings: Timings) -> TableRecord:
        """Leave a waiting table; the table after. A creator closes it, a joiner frees the
        seat (a quick-match table with no human left closes). ``bad_token``,
        ``already_started``."""
        ...

    async def claim(self, table_id: str, owner: str, now_ms: int, timings: Timings) -> bool:
        """Claim a waiting table to start it now; False if it is not waiting."""
        ...

    async def claim_due(self, owner: str, now_ms: int, limit: int, timings: Timings) -> list[str]:
        """Claim due tables (and tables whose claim expired): up to ``limit`` of them;
        the Redis store, up to ``limit`` from each home's due set (redis_keys.py)."""
        ...

    async def finish(
        self,
        table_id: str,
        owner: str,
        replica: str,
        bots: Sequence[tuple[int, str]],
        timings: Timings,
    ) -> TableRecord | None:
        """Record a start: status started, the replica, bots in the empty seats; the table
        after. None if ``owner`` no longer holds the claim."""
        ...

    async def release(
        self, table_id: str, owner: str, now_ms: int, mode: ReleaseMode, timings: Timings
    ) -> str:
        """Give a claim back after a failed start; returns the new status, or ``lost``."""
        ...

    async def table(self, table_id: str) -> TableRecord | None: ...

    async def seat_of(self, token_hash: str) -> tuple[str, int] | None:
        """(table id, seat) of a seat token's hash."""
        ...

    async def table_by_code(self, code: str) -> str | None: ...

    def changes(self) -> AsyncIterator[str]:
        """Ids of tables as they change, from every replica; ``""`` means "anything may
        have changed" (after a reconnect)."""
        ...

    async def close(self) -> None: ...
