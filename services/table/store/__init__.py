"""The table store: one interface, two implementations (``store.redis``, ``store.memory``).

A table's keys are its meta (fixed facts and the seed), its move log, its state
(clocks, covers, round-over), its move-id records (exactly-once), and its lease.
Every write a replica makes to a live table is fenced by the lease: it succeeds only
while the lease holds that replica's ``owner`` string, so a replica that lost a table
can never write to it again. ``append`` also checks the log's length, so two
replicas can never both append move ``n``. ``append`` and ``save_state`` given a
``lease_ms`` also renew the lease, so only idle tables need ``renew_many``.

Finishing is one atomic step: the final state, and the lease turned into ``FINISHED``
(services/table/store/lease_index.py), which nobody can acquire, so a finished table is
never adopted again nor its record logged twice.

The live tables are listed in a lease index: each owner ``note_leases`` its tables'
expiries every renewal round; sweepers ``claim_expired`` the entries past their
expiry, and check each lease before adopting.

With an archive (``DATABASE_URL``), a finished table is listed in a pending index too
(``finish(..., archive=True)``, or ``add_pending``: before it leaves the lease index), its
keys kept until its record is in the archive; the replicas' archivers ``claim_pending``
its entry, write the record, then ``drop_archived`` its keys and its entry
(services/table/archiver.py).

A store that cannot serve for now raises ``StoreUnavailable`` (services/common/errors.py:
its ``again`` says whether the call may be sent again); any other error is a bug.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, NamedTuple, Protocol

from services.table.stored import Reply, StoredTable, TableMeta, TableState

__all__ = ["AppendResult", "Complaint", "Expired", "Pending", "TableStore"]

AppendResult = Literal["ok", "conflict", "lost"]
"""``ok``; ``conflict``: the log is not ``index`` long; ``lost``: the lease is not ours."""

Complaint = Literal["moved", "cooling", "noted", "revoked"]
"""What ``complain`` did: ``moved``: the lease is not the one complained of (any more);
``cooling``: the table moved by complaint a moment ago, none is heard now; ``noted``; and
``revoked``: complaints stood long enough, the lease is free."""


class Expired(NamedTuple):
    """A table whose entry in the lease index expired, ``overdue_ms`` ago (by Redis's
    clock: the last expiry its owner noted, or its release)."""

    table_id: str
    overdue_ms: int


class Pending(NamedTuple):
    """A finished table waiting for the archive, and when it was listed (its finish, unix ms)."""

    table_id: str
    finished_at_ms: int


class TableStore(Protocol):
    async def create(self, meta: TableMeta, state: TableState, owner: str, lease_ms: int) -> bool:
        """Store a new table with its lease held by ``owner``; False if the id is taken."""
        ...

    async def load(self, table_id: str) -> StoredTable | None: ...

    async def append(
        self,
        table_id: str,
        owner: str,
        index: int,
        move: dict[str, Any],
        state: TableState,
        reply: Reply | None = None,
        lease_ms: int = 0,
    ) -> AppendResult:
        """Atomically: append ``move`` as move ``index``, save ``state``, record ``reply``,
        and (``lease_ms`` > 0) renew the lease to ``lease_ms`` from now."""
        ...

    async def save_state(
        self, table_id: str, owner: str, state: TableState, lease_ms: int = 0
    ) -> bool:
        """Save ``state`` (and renew the lease as ``append`` does); False if the lease is
        not ``owner``'s."""
        ...

    async def reply(self, table_id: str, seat: int, move_id: str) -> int | None:
        """The version an earlier ``append`` recorded for ``seat``'s ``move_id``, if any."""
        ...

    async def acquire(self, table_id: str, owner: str, lease_ms: int) -> str | None:
        """Take (or extend our own) lease: None on success, else the current holder, or
        ``COMPLAINED`` (lua.py) if ``owner`` was complained away from it a moment ago."""
        ...

    async def complain(
        self, table_id: str, owner: str, hold_ms: int, window_ms: int, cooldown_ms: int
    ) -> Complaint:
        """A gateway could not reach ``owner``, the table's holder: note it (forgotten
        ``window_ms`` after the latest complaint); once complaints against it have stood
        ``hold_ms``, revoke its lease (its next write or renewal is fenced off) and keep it
        from taking the table back, and every complaint unheard, for ``cooldown_ms``
        (``acquire`` answers ``COMPLAINED`` to it meanwhile)."""
        ...

    async def renew(self, table_id: str, owner: str, lease_ms: int) -> bool:
        """Extend ``owner``'s lease to ``lease_ms`` from now; False if it is not ``owner``'s."""
        ...

    async def renew_many(self, table_ids: Sequence[str], owner: str, lease_ms: int) -> list[bool]:
        """``renew`` for each id, in one round trip (or a few): a bool per id, in order.

        A lease that is not ``owner``'s (another owner holds it, it expired, the table
        is unknown) is False and left as it is.
        """
        ...

    async def release(self, table_id: str, owner: str) -> None:
        """Give the lease up (only if ``owner`` holds it); the index then lists it expired."""
        ...

    async def holder(self, table_id: str) -> str | None:
        """The lease's value: an owner string, ``FINISHED``, or None (nobody holds it)."""
        ...

    async def finish(
        self,
        table_id: str,
        owner: str,
        state: TableState,
        ttl_ms: int,
        archive_after_ms: int | None = None,
    ) -> bool:
        """In one step: save the final ``state`` and turn the lease into ``FINISHED``, every
        key expiring after ``ttl_ms``; False (nothing written) if the lease is not
        ``owner``'s. Then (``archive_after_ms`` given) the table is listed pending for the
        archive, sweepers taking it after that many ms (``add_pending``), and only then
        leaves the live tables."""
        ...

    async def add_pending(self, table_id: str, delay_ms: int) -> None:
        """List a finished table as waiting for the archive, for sweepers to take after
        ``delay_ms``; once (listed again, it keeps its first finish time and delay)."""
        ...

    async def pending_count(self) -> int:
        """How many finished tables wait for the archive (fleet-wide)."""
        ...

    async def claim_pending(self, limit: int, claim_ms: int) -> list[Pending]:
        """Up to ``limit`` pending tables due for a sweeper, each moved ``claim_ms`` ahead
        so other sweepers pass over it meanwhile (it comes round again if not dropped)."""
        ...

    async def drop_archived(self, table_id: str) -> bool:
        """Once its record is in the archive: delete a finished table's keys (only if it is
        finished: its lease ``FINISHED``), then its pending entry. False if there were no
        such keys (dropped already, or expired); the entry goes either way."""
        ...

    async def live_tables(self) -> list[str]:
        """Ids of tables not yet finished."""
        ...

    async def note_leases(self, ages: Sequence[tuple[str, int]], lease_ms: int) -> None:
        """Record in the lease index that each table's lease, renewed ``age`` ms ago,
        expires ``lease_ms - age`` from now (tables no longer live are not listed again)."""
        ...

    async def expired_count(self) -> int:
        """How many live tables the index says have an expired lease."""
        ...

    async def claim_expired(self, limit: int, claim_ms: int) -> list[Expired]:
        """Up to ``limit`` entries of the index that have expired (each table's id, and
        how long ago), each moved ``claim_ms`` ahead so other sweepers pass over it
        meanwhile. Their leases may be held again: check."""
        ...

    async def lease_overdue_ms(self, table_id: str) -> int | None:
        """How many ms ago the index says ``table_id``'s lease expired (or was released): 0
        if not yet (its owner notes it a little late: a lease found free expired now); None
        if the table is not listed."""
        ...

    async def forget(self, table_id: str) -> None:
        """Drop ``table_id`` from the live tables (it finished, or it is gone)."""
        ...
