"""Finished matches' records into the archive, then out of the store (docs/tables.md).

With an archive (``DATABASE_URL``), finishing a table also lists it in the store's
pending index (store/pending.py). The replica that finished it archives it at once
(``archive_now``); every replica's sweep (every ``ARCHIVE_SWEEP_MS``) claims a batch of
the pending tables due (those a crashed or slow replica left: each entry is left to its
finisher for ``ARCHIVE_CLAIM_MS``, and a claimed one is moved that far ahead, so sweepers
share the work and pass over each other's). Archiving one table: its record is built
from the stored final state (the log ``GetRecord`` serves), ``put_record`` (True: stored
now; False: present already: either way it is there), then ``drop_archived`` deletes its
keys and its entry. Nothing is dropped before the write answered, so a crash anywhere
leaves the entry for a sweeper, and the archive keeps one record (the first write wins).

With a profile store (the same database), a match played to its end with a profile at
the table first has its result applied (``apply_result``: results.py builds it from the
stored log), then its record written: both are idempotent (a result once per table id,
in one transaction; a record once), so a sweep that redoes a crashed replica's archiving
applies nothing twice, and the keys go only after both answered. The result's failure
(``StoreUnavailable``) counts as the archive's, as the record's does.

While the archive does not answer (``StoreUnavailable``) nothing is dropped: the entries
wait, the finished tables' keys stay (until ``FINISHED_TTL_MS``: the backlog's bound), play
goes on. The sweep then only pings the archive (as it does when it has nothing to write),
backing off (``ARCHIVE_SWEEP_MS`` doubled
up to ``ARCHIVE_BACKOFF_MAX_MS``); ``on_up`` hears each change (the health service's
``rackem.archive``) and ``rackem_archive_up`` shows it.

Retention (``RECORD_RETENTION_MS`` > 0): ``purge`` deletes records past it, every
``PURGE_MS`` on every replica (idempotent; each call deletes what is due).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from services.archive.profiles import ProfileStore
from services.archive.records import MatchRecord, RecordStore, retention_cutoff
from services.common.errors import StoreUnavailable
from services.common.logs import event
from services.table.metrics import TableMetrics
from services.table.results import result_of
from services.table.settings import TableSettings
from services.table.store import Pending, TableStore
from services.table.table import Table, TableConfig

__all__ = ["Archiver", "record_of", "wants_result"]

log = logging.getLogger("rackem.table")


def record_of(table: Table, finished_at_ms: int) -> MatchRecord:
    """A finished table's record, as the archive keeps it."""
    return MatchRecord(
        table_id=table.table_id,
        code=table.meta.code,
        reason=table.state.ended_reason,
        finished_at_ms=finished_at_ms,
        log_json=table.log_json(),
    )


def wants_result(table: Table) -> bool:
    """A match played to its end with a profile at the table: its result goes to the
    profile store (ratings when rated, history, stats, the Daily Rack's entry)."""
    return table.state.ended_reason == "finished" and any(
        seat.profile and not seat.bot for seat in table.meta.seats
    )


class Archiver:
    def __init__(
        self,
        store: TableStore,
        records: RecordStore,
        config: TableConfig,
        settings: TableSettings,
        retention_ms: int,
        metrics: TableMetrics,
        profiles: ProfileStore | None = None,
        keep_finished: bool = False,
    ) -> None:
        self.store = store
        self.records = records
        self.profiles = profiles  # where finished matches' results go (None: nowhere)
        # The store keeps finished tables itself (the in-process store's file, ``rackem
        # up`` without Redis): archived at once, never listed pending, never dropped, so a
        # seat's token still finds its finished table.
        self.keep_finished = keep_finished
        self._config = config
        self._settings = settings
        self._retention_ms = retention_ms
        self._metrics = metrics
        self.up = True  # the archive answered the last call
        self.on_up: Callable[[bool], Awaitable[None]] | None = None
        self._failures = 0
        self._next_try = 0.0  # monotonic: while backing off, the sweep waits until then
        self._now: set[asyncio.Task[None]] = set()  # archive_now's tasks
        metrics.archive_up.set(1)

    # -- the archive's health ----------------------------------------------------------

    async def _answered(self) -> None:
        self._failures = 0
        self._next_try = 0.0
        if not self.up:
            self.up = True
            self._metrics.archive_up.set(1)
            event(log, "archive_reachable", logging.WARNING)
            if self.on_up is not None:
                await self.on_up(True)

    async def _failed(self) -> None:
        self._failures += 1
        s = self._settings
        backoff = min(s.archive_sweep_ms * 2 ** min(self._failures, 16), s.archive_backoff_max_ms)
        self._next_try = time.monotonic() + backoff / 1000
        if self.up:
            self.up = False
            self._metrics.archive_up.set(0)
            event(log, "archive_unreachable", logging.WARNING)
            if self.on_up is not None:
                await self.on_up(False)

    # -- archiving -------------------------------------------------------------------

    def archive_now(self, table: Table) -> None:
        """Archive a table this replica just finished, in the background (unless the
        archive is away: then a sweep takes it once it is back)."""
        if not self.up:
            return
        task = asyncio.create_task(self._now_one(table))
        self._now.add(task)
        task.add_done_callback(self._now.discard)

    async def _now_one(self, table: Table) -> None:
        try:
            await self._archive(table, int(time.time() * 1000))
        except StoreUnavailable:
            event(log, "archive_deferred", logging.WARNING, table=table.table_id)
        except Exception:
            log.error("archive_failed", extra={"fields": {"table": table.table_id}}, exc_info=True)

    async def _archive(self, table: Table, finished_at_ms: int) -> bool:
        """Apply ``table``'s result to the profiles (``wants_result``), write its record,
        then drop its keys; False if the archive did not answer (nothing dropped)."""
        try:
            if self.profiles is not None and wants_result(table):
                await self.profiles.apply_result(result_of(table, finished_at_ms))
            stored = await self.records.put_record(record_of(table, finished_at_ms))
        except StoreUnavailable:
            self._metrics.archive_writes.labels("failed").inc()
            await self._failed()
            return False
        self._metrics.archive_writes.labels("stored" if stored else "present").inc()
        await self._answered()
        if not self.keep_finished:
            await self.store.drop_archived(table.table_id)
        return True

    async def _archive_pending(self, pending: Pending) -> bool:
        loaded = await self.store.load(pending.table_id)
        if loaded is None:  # dropped by another replica meanwhile, or expired
            await self._lost_or_done(pending.table_id)
            return True
        if not loaded.state.over:  # cannot be: only finished tables are listed
            await self.store.drop_archived(pending.table_id)  # the entry only (not finished)
            return True
        table = Table.rebuild(loaded, self._config, live=False)
        return await self._archive(table, pending.finished_at_ms)

    async def _lost_or_done(self, table_id: str) -> None:
        try:
            present = await self.records.get_record(table_id) is not None
        except StoreUnavailable:
            await self._failed()
            return  # asked again next time
        if not present:  # its keys expired before the archive came back
            event(log, "archive_lost", logging.ERROR, table=table_id)
        await self.store.drop_archived(table_id)

    async def sweep(self) -> None:
        """Archive a batch of the pending tables due; while the archive is away, ping it
        (backing off) instead."""
        s = self._settings
        self._metrics.archive_pending.set(await self.store.pending_count())
        if time.monotonic() < self._next_try:
            return
        if not self.up:
            try:
                await self.records.ping()
            except StoreUnavailable:
                await self._failed()
                return
            await self._answered()
        claimed = await self.store.claim_pending(s.archive_batch, s.archive_claim_ms)
        if not claimed:
            if self.up:  # nothing to write: is it still there? (for health and the metric)
                try:
                    await self.records.ping()
                except StoreUnavailable:
                    await self._failed()
            return
        for pending in claimed:
            try:
                if not await self._archive_pending(pending):
                    break  # the archive is away: the rest come round again
            except StoreUnavailable:
                raise
            except Exception:  # this one: logged, retried after its claim
                log.error(
                    "archive_failed", extra={"fields": {"table": pending.table_id}}, exc_info=True
                )
        self._metrics.archive_pending.set(await self.store.pending_count())

    async def purge(self) -> None:
        """Delete the records past the retention (none with a retention of 0)."""
        cutoff = retention_cutoff(self._retention_ms, int(time.time() * 1000))
        if cutoff is None or not self.up:
            return
        try:
            purged = await self.records.purge(cutoff)
        except StoreUnavailable:
            await self._failed()
            return
        if purged:
            event(log, "records_purged", count=purged)

    async def record(self, table_id: str, *, away_too: bool = False) -> MatchRecord | None:
        """The archived record of ``table_id``; None if it is not there, or (unless
        ``away_too``) while this replica believes the archive away. ``away_too`` asks
        all the same; an answer brings it back. ``StoreUnavailable`` if it does not
        answer (then it is believed away)."""
        if not self.up and not away_too:
            return None
        try:
            record = await self.records.get_record(table_id)
        except StoreUnavailable:
            await self._failed()
            raise
        await self._answered()
        return record

    async def stop(self) -> None:
        """Stop archiving now (what is pending stays for the other replicas' sweeps)."""
        for task in list(self._now):
            task.cancel()
        await asyncio.gather(*self._now, return_exceptions=True)
