"""Taking over a table this replica does not serve: asked for it, or found by the sweep.

A request for a table this replica does not hold finds the table's lease: free → take
it, read the table again, rebuild it by replaying its log, serve it; held by a live
replica → ``wrong_replica`` with that replica's address; held by one the registry no
longer lists (it died; its lease has not expired yet) → ``unavailable``, try again. A
table that is over is read back from the store without a lease. Every request for a
table that is being taken waits for that one take. A replica that cannot reach the store
(``Leases.cut``, or the table will not load) answers ``wrong_replica`` with no owner: the
gateway asks the balanced address again, and reaches a replica that can.

A request whose gateway could not reach the owner a ``wrong_replica`` named
(``unreachable``: that owner's address) is a complaint against it (``TableStore.complain``):
noted, answered ``unavailable`` (try again), until complaints have stood
``COMPLAINT_HOLD_MS``; then the owner's lease is revoked (its next write or renewal is
fenced off: it closes the table) and this replica takes the table at once. The owner may
not take it back, nor is a new complaint heard, for ``COMPLAINT_COOLDOWN_MS``.

On adoption the human to move gets at least a whole decision clock again (and the
round-over screen its whole wait): a change of owner is the system's failure, never the
player's, so no cover takes a seat for the time it cost (``restart_clocks``).

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

from services.common.errors import ServiceError, StoreUnavailable
from services.common.logs import event
from services.table.clocks import now_ms
from services.table.leases import parse_owner, stepped_aside
from services.table.store.lease_index import FINISHED
from services.table.store.lua import COMPLAINED
from services.table.stored import StoredTable
from services.table.table import Table
from services.table.tables_api import TablesApi

__all__ = ["Adoption", "restart_clocks"]

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

    async def get(self, table_id: str, sweeping: bool, unreachable: str = "") -> Table:
        """``table_id``, taken over (or read back once over); one take at a time.
        ``unreachable``: the owner's address the asking gateway could not reach."""
        if self._tables.leases.cut:  # the store does not answer: no lease can be had here
            raise stepped_aside()
        pending = self._pending.get(table_id)
        if pending is None:
            pending = asyncio.ensure_future(self._adopt(table_id, sweeping, unreachable))
            self._pending[table_id] = pending
            pending.add_done_callback(lambda done: self._adopted(table_id, done))
        return await asyncio.shield(pending)

    def _adopted(self, table_id: str, done: asyncio.Future[Table]) -> None:
        self._pending.pop(table_id, None)
        self._expired.pop(table_id, None)
        if not done.cancelled():
            done.exception()  # retrieved: every waiter got it already

    async def _adopt(self, table_id: str, sweeping: bool, unreachable: str) -> Table:
        try:
            return await self._take(table_id, sweeping, unreachable)
        except ServiceError:
            raise
        except StoreUnavailable:  # this replica cannot load it now: another one may
            self._tables.leases.failed()
            raise stepped_aside() from None
        except Exception:  # the store failed, or the table would not rebuild
            log.error("adopt_failed", extra={"fields": {"table": table_id}}, exc_info=True)
            raise ServiceError("unavailable", "the table cannot be served now; try again") from None

    async def _take(self, table_id: str, sweeping: bool, unreachable: str = "") -> Table:
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
        if holder is not None and holder != owner and holder != FINISHED:
            if not unreachable or parse_owner(holder)[1] != unreachable:
                raise await self._elsewhere(holder)
            if not await self._complain(table_id, holder):
                return await self._take(table_id, sweeping)  # it moved meanwhile: look again
            holder = None  # revoked
        if tables.draining:
            raise ServiceError("shutting_down", "this replica is shutting down; try again")
        expired = self._expired.get(table_id)
        if expired is None and holder is None:  # since when is it free, says the index
            overdue_ms = await store.lease_overdue_ms(table_id)
            if overdue_ms is not None:
                expired = time.monotonic() - overdue_ms / 1000
        holder = await store.acquire(table_id, owner, tables.settings.lease_ms)
        if holder == COMPLAINED:  # complained away from it a moment ago: not back yet
            raise stepped_aside()
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

    async def _complain(self, table_id: str, holder: str) -> bool:
        """A gateway could not reach ``holder``: True once its lease is revoked, False if
        the table moved meanwhile; else ``unavailable`` (complaints must stand a while)."""
        settings = self._tables.settings
        hold = settings.complaint_hold_ms
        verdict = await self._tables.store.complain(
            table_id, holder, hold, 3 * hold, settings.complaint_cooldown_ms
        )
        if verdict == "revoked":
            event(log, "owner_complained_away", logging.WARNING, table=table_id, owner=holder)
            return True
        if verdict == "moved":
            return False
        raise ServiceError("unavailable", "the table's replica cannot be reached; try again")

    def _rebuild(self, stored: StoredTable) -> Table:
        try:
            table = Table.rebuild(stored, self._tables.config, live=True)
            restart_clocks(table)
            return table
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
        if tables.draining or tables.leases.cut:
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
            if isinstance(result, ServiceError) and _again_soon(result)
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


def _again_soon(err: ServiceError) -> bool:
    """A sweep's refusal worth another look next sweep: a lease a dead owner still holds a
    moment (``unavailable``), or one this replica may not take now (``wrong_replica`` with
    no owner: it cannot reach the store, or was complained away from the table)."""
    return err.code == "unavailable" or (err.code == "wrong_replica" and not err.owner)


def restart_clocks(table: Table) -> None:
    """A table changing owner: the human to move gets at least a whole decision clock from
    now, and a round-over screen its whole wait. The time the change cost (a lease, a
    takeover, a partition that kept the player's moves from the owner) is the system's,
    never the player's: no cover takes a seat for it. A seat already covered stays so (its
    human takes it back with their next move or Continue)."""
    state, config = table.state, table.config
    now = now_ms()
    if state.status == "playing" and state.deadline_ms and table.kind(table.match.turn) == "human":
        state.deadline_ms = max(state.deadline_ms, now + config.decision_ms)
    elif state.status == "round_over" and state.continue_deadline_ms:
        state.continue_deadline_ms = max(state.continue_deadline_ms, now + config.continue_ms)
