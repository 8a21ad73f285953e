"""The table store: one interface, two implementations (``store_redis``, ``store_memory``).

A table's keys are its meta (fixed facts and the seed), its move log, its state
(clocks, covers, round-over), its move-id records (exactly-once), and its lease.
Every write a replica makes to a live table is fenced by the lease: it succeeds only
while the lease holds that replica's ``owner`` string, so a replica that lost a table
can never write to it again. ``append`` also checks the log's length, so two
replicas can never both append move ``n``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Literal, Protocol

from services.table.stored import Earlier, Reply, StoredTable, TableMeta, TableState

__all__ = ["AppendResult", "TableStore"]

AppendResult = Literal["ok", "conflict", "lost"]
"""``ok``; ``conflict``: the log is not ``index`` long; ``lost``: the lease is not ours."""


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
    ) -> AppendResult:
        """Atomically: append ``move`` as move ``index``, save ``state``, record ``reply``."""
        ...

    async def save_state(self, table_id: str, owner: str, state: TableState) -> bool:
        """Save ``state``; False if the lease is not ``owner``'s."""
        ...

    async def reply(self, table_id: str, seat: int, move_id: str) -> Earlier | None:
        """What an earlier ``append`` recorded for ``seat``'s ``move_id``, if any."""
        ...

    async def acquire(self, table_id: str, owner: str, lease_ms: int) -> str | None:
        """Take (or extend our own) lease: None on success, else the current holder."""
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
        """Give the lease up (only if ``owner`` holds it)."""
        ...

    async def holder(self, table_id: str) -> str | None: ...

    async def finish(self, table_id: str, owner: str, state: TableState, ttl_ms: int) -> bool:
        """Save the final ``state``, drop the lease, expire the table after ``ttl_ms``."""
        ...

    async def live_tables(self) -> list[str]:
        """Ids of tables not yet finished."""
        ...

    async def orphans(self, skip: Collection[str] = ()) -> list[str]:
        """Ids of tables not yet finished whose lease nobody holds (the sweeper adopts them).

        The ids in ``skip`` (tables the caller holds or is taking) are left out unread.
        """
        ...

    async def forget(self, table_id: str) -> None:
        """Drop ``table_id`` from the live tables (it finished, or it is gone)."""
        ...
