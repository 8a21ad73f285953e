"""The tables this replica serves: finding them, running and retiring them, handing them over.

``get`` finds a table: served here already, or taken over now (adoption.py); a table is
created by creation.py. Each table served has its driver (driver.py); when the driver
ends, a table that is over is finished in the store (one atomic step, fenced by the
lease: only the replica whose finish that was logs the match record), and any other has
its lease released. With an archive (``archiver``, archiver.py), finishing also lists the
table pending for it, and this replica archives it at once.

Four background rounds run (six with an archive: its sweep and the retention's purge),
each proportional to this replica's own tables, never to
the fleet: the heartbeat (the replica's load and whether it drains, into the registry;
a replica whose heartbeat cannot reach the store is not ready), the lease renewal
(leases.py), the step-aside watch (leases.py: a table whose lease ran out while the store
did not answer closes, answering ``wrong_replica``) and the sweep (adoption.py). ``drain``
(SIGTERM) stops them, closes every table and releases its lease.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from services.common.cancelling import cancel_until_done
from services.common.errors import ServiceError
from services.common.logs import event
from services.common.redis_client import is_outage
from services.common.registry import Registry, Replica
from services.table.adoption import Adoption
from services.table.archiver import Archiver
from services.table.bot_client import BotClient
from services.table.creation import TABLE_ID
from services.table.driver import drive
from services.table.leases import Leases
from services.table.settings import TableSettings
from services.table.table import Table, TableConfig

__all__ = ["Tables"]

log = logging.getLogger("rackem.table")


class Tables:
    def __init__(
        self,
        settings: TableSettings,
        config: TableConfig,
        registry: Registry,
        bots: BotClient,
        replica_id: str,
    ) -> None:
        self.settings = settings
        self.config = config
        self.store = config.store
        self.registry = registry
        self.bots = bots
        self.replica_id = replica_id
        self.live: dict[str, Table] = {}
        self.draining = False
        self._drivers: dict[str, asyncio.Task[None]] = {}
        self._loops: list[asyncio.Task[None]] = []
        # Whether the last heartbeat reached the store's Redis: a replica that cannot is
        # not ready (it can serve no table), and ``on_reachable`` (the server's health)
        # hears each change.
        self.reachable = True
        self.on_reachable: Callable[[bool], Awaitable[None]] | None = None
        self.metrics = config.metrics
        self.leases = Leases(
            config.store, config.owner, settings.lease_ms, self.live, config.metrics
        )
        if self.metrics is not None:  # read at each scrape, never kept up to date by hand
            self.metrics.live_tables.set_function(lambda: len(self.live))
        # With an archive: finished tables' records go there, then leave the store.
        self.archiver: Archiver | None = None
        self.adoption = Adoption(self)

    # -- background work -----------------------------------------------------------

    async def start(self) -> None:
        await self._heartbeat()
        s = self.settings
        self._loops = [
            asyncio.create_task(self._every(s.heartbeat_ms, self._heartbeat, "heartbeat")),
            asyncio.create_task(self._every(s.lease_ms // 3, self.leases.renew, "renew")),
            asyncio.create_task(self._every(max(s.lease_ms // 6, 10), self._watch, "step_aside")),
            asyncio.create_task(self._every(s.sweep_ms, self.adoption.sweep, "sweep")),
        ]
        if self.archiver is not None:
            archiver = self.archiver
            self._loops += [
                asyncio.create_task(self._every(s.archive_sweep_ms, archiver.sweep, "archive")),
                asyncio.create_task(self._every(s.purge_ms, archiver.purge, "purge")),
            ]

    async def _every(self, period_ms: int, work: Callable[[], Awaitable[None]], name: str) -> None:
        while True:
            await asyncio.sleep(period_ms / 1000)
            try:
                await work()
            except Exception as exc:
                if is_outage(exc):  # Redis is away: said once a period, without a trace
                    event(log, f"{name}_unavailable", logging.WARNING)
                else:
                    log.error(f"{name}_failed", extra={"fields": {}}, exc_info=True)

    async def _watch(self) -> None:
        """Tables whose lease ran out unrenewed step aside (``Leases.step_aside``)."""
        self.leases.step_aside()

    async def _heartbeat(self) -> None:
        replica = Replica(self.replica_id, self.config.replica, len(self.live), self.draining)
        sent = time.monotonic()
        try:
            await self.registry.heartbeat(replica, self.settings.heartbeat_ttl_ms)
        except Exception:
            self.leases.failed()
            await self._reached(False)
            raise
        self.leases.reached(sent)
        await self._reached(True)

    async def _reached(self, reachable: bool) -> None:
        if reachable == self.reachable or self.draining:
            return
        self.reachable = reachable
        event(log, "store_reachable" if reachable else "store_unreachable", logging.WARNING)
        if self.on_reachable is not None:
            await self.on_reachable(reachable)

    # -- finding ------------------------------------------------------------------------

    async def get(self, table_id: str, unreachable: str = "") -> Table:
        """The table, served here: owned already, adopted now, or read back once over.
        ``unreachable``: the owner's address the asking gateway could not reach (its
        complaint against that owner, adoption.py)."""
        table = self.live.get(table_id)
        if table is not None:
            if table.closed is not None:
                # Closed (it stepped aside, or its lease was lost) until its driver retires
                # it: answered at once, never queued behind its lock, which a store call
                # that the store does not answer may hold up to its socket timeout.
                raise table.closed
            return table
        if not TABLE_ID.fullmatch(table_id):
            raise ServiceError("no_table", "no such table")
        return await self.adoption.get(table_id, sweeping=False, unreachable=unreachable)

    # -- serving and retiring --------------------------------------------------------

    def serve(self, table: Table) -> None:
        """Serve ``table`` here: it is live, its driver runs."""
        if self.draining:  # adopted while draining began: hand it straight back
            table.close(ServiceError("shutting_down", "this replica is shutting down"))
        self.live[table.table_id] = table
        self._drivers[table.table_id] = asyncio.create_task(self._run(table))

    async def _run(self, table: Table) -> None:
        try:
            await drive(table, self.bots)
        except Exception:
            log.error("driver_failed", extra={"fields": {"table": table.table_id}}, exc_info=True)
            self.ended("failed")
            async with table.lock:
                table.close(ServiceError("unavailable", "the table is restarting; try again"))
        try:
            if table.closed is None and table.over:
                async with table.lock:
                    await self.finish(table)
            else:
                await self.store.release(table.table_id, self.config.owner)
        except Exception:
            log.error("retire_failed", extra={"fields": {"table": table.table_id}}, exc_info=True)
        finally:
            if self.live.get(table.table_id) is table:
                del self.live[table.table_id]
            self._drivers.pop(table.table_id, None)

    async def finish(self, table: Table) -> None:
        """Finish the table in the store (one atomic step, fenced by the lease); only the
        replica whose finish that was logs the match record. End the streams."""
        ttl = self.settings.finished_ttl_ms
        # With an archive, the other replicas' sweeps leave it to this one for a claim.
        archiver = self.archiver
        keep = archiver is None or archiver.keep_finished  # then not listed pending
        after = None if keep else self.settings.archive_claim_ms
        if await self.store.finish(table.table_id, self.config.owner, table.state, ttl, after):
            self.ended("finished" if table.state.ended_reason == "finished" else "abandoned")
            event(
                log,
                "match_record",
                code=table.meta.code,
                table=table.table_id,
                reason=table.state.ended_reason,
                match=table.match_log(public=True),  # a daily's seed stays in (daily.py)
            )
            if self.archiver is not None:
                self.archiver.archive_now(table)
        table.end_streams()

    def ended(self, outcome: str) -> None:
        """Count a match that ended here (``rackem_table_matches_ended_total``): one this
        replica finished in the store (``finished``, ``abandoned``: only the replica whose
        finish that was counts it), or lost (``failed``)."""
        if self.metrics is not None:
            self.metrics.matches_ended[outcome].inc()

    async def finished_elsewhere(self, table_id: str) -> None:
        """A table another replica finished, still in the lease index (it died before it
        took it out): listed pending for the archive (with one) first, then out of it."""
        if self.archiver is not None:
            await self.store.add_pending(table_id, 0)
        await self.store.forget(table_id)

    async def drain(self) -> None:
        """Stop taking tables, close each one (its streams end ``shutting_down``), release it."""
        self.draining = True
        # Cancelled again until they end: a loop's cancellation can be swallowed by a
        # Redis call (services/common/cancelling.py), and it would then go on forever.
        await asyncio.gather(*(cancel_until_done(loop) for loop in self._loops))
        if self.archiver is not None:  # what it was writing stays pending, for the others
            await self.archiver.stop()
        try:
            await self._heartbeat()
        except Exception:
            log.error("heartbeat_failed", extra={"fields": {}}, exc_info=True)
        for table in list(self.live.values()):
            async with table.lock:
                table.close(ServiceError("shutting_down", "this replica is shutting down"))
        await asyncio.gather(*self._drivers.values(), return_exceptions=True)
        event(log, "tables_handed_over", replica=self.replica_id)
        try:
            await self.registry.remove(self.replica_id)
        except Exception:
            log.error("registry_remove_failed", extra={"fields": {}}, exc_info=True)
