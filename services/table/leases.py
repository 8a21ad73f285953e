"""This replica's leases on its tables: the owner string that fences them, and their renewal.

A live table's lease holds its owner's string, ``"replica-id address"`` (``owner_string``).
Every write a replica makes to a live table is fenced by it in the store, so a replica
that lost a table can never write to it again; a replica that finds a table held learns
from it where the table is served (``parse_owner``).

Renewing costs work proportional to this replica's own tables, never to the fleet's:
every append and save renews its own table's lease; every third of the lease,
``Leases.renew`` renews the rest (the idle tables) in one batched store call and notes
every table's expiry in the lease index, one call per index shard
(services/table/store/lease_index.py). A table whose lease it fails to renew was lost
(another replica may hold it now): it closes here, its streams ending ``unavailable``.

An owner that cannot write steps aside (``step_aside``, every sixth of the lease): a table
whose lease has not been renewed for a whole lease time by this replica's own monotonic
clock may be held by another replica by now, and this one cannot reach the store to know.
It closes here, its streams and calls answered ``wrong_replica`` with no owner, so the
gateways go to the balanced address and find the replica that took it over. While no store
call has succeeded for a lease time (``cut``) the replica takes no table either: it answers
``wrong_replica`` at once instead of waiting on a store that does not answer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from services.common.errors import ServiceError
from services.common.logs import event
from services.table.store import TableStore

if TYPE_CHECKING:
    from services.table.metrics import TableMetrics
    from services.table.table import Table

__all__ = ["Leases", "owner_string", "parse_owner", "stepped_aside"]

log = logging.getLogger("rackem.table")


def owner_string(replica_id: str, addr: str) -> str:
    return f"{replica_id} {addr}"


def parse_owner(owner: str) -> tuple[str, str]:
    replica_id, _, addr = owner.partition(" ")
    return replica_id, addr


def stepped_aside() -> ServiceError:
    """What a table this replica cannot serve now answers: ``wrong_replica`` naming no
    owner (the gateway asks the balanced address, where the replica that took it is)."""
    return ServiceError("wrong_replica", "this replica cannot reach the table store; try another")


class Leases:
    def __init__(
        self,
        store: TableStore,
        owner: str,
        lease_ms: int,
        live: Mapping[str, Table],
        metrics: TableMetrics | None = None,
    ) -> None:
        """The leases ``owner`` holds on the tables it serves, ``live`` (``Tables.live``);
        each renewal counted in ``metrics`` (``rackem_table_lease_renewals_total``)."""
        self.store = store
        self.owner = owner
        self.lease_ms = lease_ms
        self._live = live
        self._renewals = None if metrics is None else metrics.lease_renewals
        # When the latest store call that succeeded was sent (monotonic s), and whether one
        # failed (or a table stepped aside) since: ``cut``.
        self.last_ok = time.monotonic()
        self._trouble = False

    def reached(self, sent: float) -> None:
        """A store call sent at ``sent`` (monotonic s) succeeded."""
        if sent >= self.last_ok:
            self.last_ok = sent
            self._trouble = False

    def failed(self) -> None:
        """A store call failed (unreachable, timed out)."""
        self._trouble = True

    @property
    def cut(self) -> bool:
        """No store call has succeeded for a lease time, and one failed since: whatever
        lease this replica held has run out, and it can take no table now."""
        return self._trouble and time.monotonic() - self.last_ok >= self.lease_ms / 1000

    def step_aside(self) -> int:
        """Close every table whose lease was not renewed for a lease time (its lease can no
        longer be valid: another replica may hold it); how many closed. Without waiting for
        its lock: a store call it holds may hang as long as the store does not answer (that
        call gives up at once once the table is closed: outages.py)."""
        limit = time.monotonic() - self.lease_ms / 1000
        stale = [t for t in self._live.values() if t.closed is None and t.lease_renewed <= limit]
        for table in stale:
            event(log, "table_stepped_aside", logging.WARNING, table=table.table_id)
            table.close(stepped_aside())
        if stale:
            self._trouble = True
        return len(stale)

    async def renew(self) -> None:
        """The idle tables' leases in one store call (an append or a save renewed the
        others), then every table's expiry noted in the lease index; a table whose lease
        is lost closes."""
        lease_ms = self.lease_ms
        period = lease_ms // 3 / 1000
        now = time.monotonic()
        idle = [
            (t_id, t)
            for t_id, t in self._live.items()
            if t.closed is None and now - t.lease_renewed >= period  # a closed one retires
        ]
        if idle:
            try:
                held = await self.store.renew_many([t_id for t_id, _ in idle], self.owner, lease_ms)
            except Exception:
                self._count("error", len(idle))
                self.failed()
                raise
            self.reached(now)
            lost = held.count(False)
            self._count("ok", len(held) - lost)
            self._count("lost", lost)
            for (table_id, table), renewed in zip(idle, held, strict=True):
                if renewed:
                    table.lease_renewed = max(table.lease_renewed, now)
                elif self._live.get(table_id) is table:  # else it retired meanwhile
                    event(log, "lease_lost", logging.WARNING, table=table_id)
                    async with table.lock:
                        table.close(
                            ServiceError("unavailable", "the table changed replicas; try again")
                        )
        await self.note(list(self._live.values()))

    def _count(self, result: str, tables: int) -> None:
        if self._renewals is not None and tables:
            self._renewals[result].inc(tables)

    async def note(self, tables: Sequence[Table]) -> None:
        """Note in the lease index when each of ``tables``' leases expires."""
        if not tables:
            return
        now = time.monotonic()
        ages = [(t.table_id, max(0, int((now - t.lease_renewed) * 1000))) for t in tables]
        try:
            await self.store.note_leases(ages, self.lease_ms)
        except Exception:
            self.failed()
            raise
        self.reached(now)
