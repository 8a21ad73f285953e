"""Taking over a table this replica does not serve: asked for it, or found by the sweep.

A request for a table this replica does not hold finds the table's lease: free → take
it, read the table again, rebuild it by replaying its log, serve it; held by a live
replica → ``wrong_replica`` with that replica's address; held by one the registry no
longer lists (it died; its lease has not expired yet) → ``unavailable``, try again. A
table that is over is read back from the store without a lease. Every request for a
table that is being taken waits for that one take.

The sweep (every ``sweep_ms``) asks the lease index how many leases expired (one call
per shard; nothing else when none did) and claims at most this replica's fair share of
them, enough to bring it to the fleet's mean load by the registry (at least one, at
most all), then adopts them side by side. So a dead or drained replica's tables spread
over the others instead of piling onto the first sweeper, and bot-only progress goes on
when an owner dies. It also finishes a table whose owner died between its last move and
finishing it, and drops a finished table from the index.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time

from services.common.errors import ServiceError
from services.common.logs import event
from services.table.leases import parse_owner
from services.table.store.lease_index import FINISHED
from services.table.stored import StoredTable
from services.table.table import Table
from services.table.tables_api import TablesApi

__all__ = ["Adoption"]

log = logging.getLogger("rackem.table")


class Adoption:
    def __init__(self, tables: TablesApi) -> None:
        """Taking tables over for ``tables``, this replica's."""
        self._tables = tables
        self._pending: dict[str, asyncio.Future[Table]] = {}
        # When the sweep's claims say each claimed table's lease expired (monotonic s):
        # the claim moves its index entry ahead, so the store cannot say it again.
        self._expired: dict[str, float] = {}
        self._corrupt: set[str] = set()  # tables whose log would not replay: not swept again

    # -- a request's table -----------------------------------------------------------

    async def get(self, table_id: str, sweeping: bool) -> Table:
        """``table_id``, taken over (or read back once over); one take at a time."""
        pending = self._pending.get(table_id)
        if pending is None:
            pending = asyncio.ensure_future(self._adopt(table_id, sweeping))
            self._pending[table_id] = pending
            pending.add_done_callback(lambda done: self._adopted(table_id, done))
        return await asyncio.shield(pending)

    def _adopted(self, table_id: str, done: asyncio.Future[Table]) -> None:
        self._pending.pop(table_id, None)
        self._expired.pop(table_id, None)
        if not done.cancelled():
            done.exception()  # retrieved: every waiter got it already

    async def _adopt(self, table_id: str, sweeping: bool) -> Table:
        try:
            return await self._take(table_id, sweeping)
        except ServiceError:
            raise
        except Exception:  # the store failed, or the table would not rebuild
            log.error("adopt_failed", extra={"fields": {"table": table_id}}, exc_info=True)
            raise ServiceError("unavailable", "the table cannot be served now; try again") from None

    async def _take(self, table_id: str, sweeping: bool) -> Table:
        tables = self._tables
        store = tables.store
        stored = await store.load(table_id)
        if stored is None:
            if sweeping:
                await store.forget(table_id)
            raise ServiceError("no_table", "no such table")
        if stored.state.over:
            return await self._read_only(stored, sweeping)
        owner = tables.config.owner
        holder = await store.holder(table_id)
        if holder == FINISHED:  # finished since it was loaded
            return await self._take(table_id, sweeping)
        if holder is not None and holder != owner:
            raise await self._elsewhere(holder)
        if tables.draining:
            raise ServiceError("shutting_down", "this replica is shutting down; try again")
        expired = self._expired.get(table_id)
        if expired is None and holder is None:  # since when is it free, says the index
            overdue_ms = await store.lease_overdue_ms(table_id)
            if overdue_ms is not None:
                expired = time.monotonic() - overdue_ms / 1000
        holder = await store.acquire(table_id, owner, tables.settings.lease_ms)
        if holder is not None:
            raise await self._elsewhere(holder)
        try:
            stored = await store.load(table_id)  # again: the last owner may have moved on
            if stored is None:
                raise ServiceError("no_table", "no such table")
            if stored.state.over:
                await store.release(table_id, owner)
                return await self._read_only(stored, sweeping)
            table = self._rebuild(stored)
        except BaseException:
            await store.release(table_id, owner)
            raise
        tables.serve(table)
        if tables.metrics is not None:
            tables.metrics.adoptions.inc()
            if expired is not None:
                tables.metrics.takeover_seconds.observe(time.monotonic() - expired)
        event(log, "table_adopted", table=table_id, version=table.version, swept=sweeping)
        with contextlib.suppress(Exception):  # else the next renewal round notes it
            await tables.leases.note([table])
        return table

    def _rebuild(self, stored: StoredTable) -> Table:
        try:
            return Table.rebuild(stored, self._tables.config, live=True)
        except Exception:  # a log rackcore refuses: no replica can ever serve this table
            table_id = stored.meta.table_id
            log.error("table_corrupt", extra={"fields": {"table": table_id}}, exc_info=True)
            if table_id not in self._corrupt:  # lost for good: counted once
                self._corrupt.add(table_id)
                self._tables.ended("failed")
            raise ServiceError("unavailable", "the table cannot be served") from None

    async def _read_only(self, stored: StoredTable, sweeping: bool) -> Table:
        tables = self._tables
        table = Table.rebuild(stored, tables.config, live=False)
        if sweeping:  # over but still listed live
            owner = tables.config.owner
            holder = await tables.store.acquire(table.table_id, owner, tables.settings.lease_ms)
            if holder is None:  # its owner died before finishing it: finish it here
                await tables.finish(table)
            elif holder == FINISHED:  # finished, and about to leave the index
                await tables.finished_elsewhere(table.table_id)
        return table

    async def _elsewhere(self, holder: str) -> ServiceError:
        replica_id, addr = parse_owner(holder)
        live = {r.id for r in await self._tables.registry.live()}
        if replica_id in live and addr:
            return ServiceError("wrong_replica", "another replica serves this table", owner=addr)
        return ServiceError("unavailable", "the table is changing replicas; try again")

    # -- the sweep -------------------------------------------------------------------

    async def sweep(self) -> None:
        """Adopt at most this replica's fair share of the tables whose lease expired."""
        tables = self._tables
        if tables.draining:
            return
        store, settings = tables.store, tables.settings
        expired = await store.expired_count()
        if not expired:
            return
        share = await self._fair_share(expired)
        claim_ms = settings.lease_ms  # a claim holds as long as a lease would
        now = time.monotonic()
        ids = []
        for entry in await store.claim_expired(share, claim_ms):
            table_id = entry.table_id
            if table_id in tables.live or table_id in self._corrupt:
                continue
            # Known now or never (the claim moved the entry): a request taking it reads it too.
            self._expired[table_id] = now - entry.overdue_ms / 1000
            if table_id not in self._pending:
                ids.append(table_id)
        # Side by side: a dead replica's tables are taken over together, not one by one.
        # A ServiceError: another replica was quicker, the lease is still held, or it is gone.
        taken = await asyncio.gather(
            *(self.get(table_id, sweeping=True) for table_id in ids), return_exceptions=True
        )
        # A lease its dead owner still holds for a moment (the index is noted a little
        # early): back in the index for the next sweep, not after the whole claim.
        soon = [
            (table_id, settings.lease_ms - settings.sweep_ms)
            for table_id, result in zip(ids, taken, strict=True)
            if isinstance(result, ServiceError) and result.code == "unavailable"
        ]
        if soon:
            await store.note_leases(soon, settings.lease_ms)

    async def _fair_share(self, expired: int) -> int:
        """How many of ``expired`` orphans to claim now: enough to bring this replica up to
        the fleet's mean load, and at least one (so orphans never wait on a replica that
        does not sweep), at most all of them."""
        tables = self._tables
        others = [
            r for r in await tables.registry.live() if r.id != tables.replica_id and not r.draining
        ]
        mine = len(tables.live)
        mean = math.ceil((sum(r.load for r in others) + mine + expired) / (len(others) + 1))
        return min(expired, max(1, mean - mine))
