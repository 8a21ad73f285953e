"""Starting tables: CreateTable on a replica with bots in the empty seats, exactly once.

A start always follows a claim in the store (status ``starting``, owned by this replica,
with an expiry). Only the owner's ``finish`` is recorded; if this replica dies mid-start
its claim expires and another replica's loop claims the table again. Every replica runs
``run``: it claims due tables (fill timer out, full, or retry time) and starts them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import suppress

from services._gen.rackem.v1 import table_pb2
from services.common.errors import ServiceError
from services.common.logs import event
from services.convert import rules_to_pb
from services.matchmaker.metrics import MatchmakerMetrics
from services.matchmaker.names import bot_names
from services.matchmaker.placement import Placer
from services.matchmaker.records import TableRecord, Timings
from services.matchmaker.store import ReleaseMode, Store
from services.profiles.levels import nearest_level

__all__ = ["Starter", "bot_level"]

log = logging.getLogger("rackem.matchmaker.starter")


def bot_level(record: TableRecord) -> str:
    """The level of the bots a table starts with: for a quick match whose humans brought
    ratings, the level nearest their mean (services/profiles/levels.py); else the
    table's."""
    mean = record.mean_rating
    if record.public and mean is not None:
        return nearest_level(mean)
    return record.level


class Starter:
    def __init__(
        self,
        store: Store,
        placer: Placer,
        timings: Timings,
        owner: str,
        clock: Callable[[], int],
        batch: int = 32,
        metrics: MatchmakerMetrics | None = None,
    ) -> None:
        """``clock``: wall milliseconds; ``metrics``: where each start is counted."""
        self._metrics = metrics
        self._store = store
        self._placer = placer
        self._timings = timings
        self._owner = owner
        self._clock = clock
        self._batch = batch

    @property
    def owner(self) -> str:
        """This replica's name on its claims."""
        return self._owner

    async def claim(self, table_id: str) -> bool:
        """Claim a waiting table to start it now (False: it is not waiting)."""
        return await self._store.claim(table_id, self._owner, self._clock(), self._timings)

    async def start(self, record: TableRecord, on_fail: ReleaseMode) -> TableRecord:
        """Start a table this replica has claimed (``record``: as claimed); the table after.
        On a failed placement the claim is released by ``on_fail`` and the
        ``ServiceError`` raised."""
        table_id = record.id
        # Bots sit in the empty seats, and in a rematch's seats nobody answered for; a
        # rematch's bots keep their seats and names.
        free = [i for i, seat in enumerate(record.seats) if not seat.taken or seat.reserved]
        names = bot_names(record.id, len(free), {seat.name for seat in record.seats})
        bots = list(zip(free, names, strict=True))
        bot_at = dict(bots)
        level = bot_level(record)
        seats = [
            table_pb2.SeatSpec(name=bot_at[i], bot=True, level=level)
            if i in bot_at
            else table_pb2.SeatSpec(name=seat.name, bot=True, level=level)
            if seat.bot
            else table_pb2.SeatSpec(
                name=seat.name, level=level, token_hash=seat.token_hash, profile=seat.profile
            )
            for i, seat in enumerate(record.seats)
        ]
        request = table_pb2.CreateTableRequest(
            table_id=record.id,
            code=record.code,
            rules=rules_to_pb(record.rules),
            seats=seats,
            spectators=record.spectators,
            rated=record.is_rated,
            daily=record.daily,
        )
        try:
            _, replica = await self._placer.create(request)
        except ServiceError as err:
            status = await self._store.release(
                table_id, self._owner, self._clock(), on_fail, self._timings
            )
            event(log, "start_failed", table=table_id, code=err.code, then=status)
            raise
        started = await self._store.finish(table_id, self._owner, replica, bots, self._timings)
        if started is not None:
            event(log, "table_started", table=table_id, humans=record.humans, bots=len(bots))
            self._count(record)
            return started
        event(log, "start_lost", logging.WARNING, table=table_id)
        return await self._store.table(table_id) or record

    def _count(self, record: TableRecord) -> None:
        """A table started by this replica: by kind, and a quick match's wait (from its
        table's opening, its first player's entry, by the wall clock of the replica that
        opened it)."""
        if self._metrics is None:
            return
        self._metrics.tables_started["quick" if record.public else "private"].inc()
        if record.public:
            self._metrics.wait_seconds.observe(max(0, self._clock() - record.created_ms) / 1000)

    async def _start_quietly(self, table_id: str) -> None:
        try:
            record = await self._store.table(table_id)
            if record is not None:
                await self.start(record, "retry")
        except ServiceError:
            pass  # logged by start; the table is due again after retry_ms
        except Exception as exc:
            event(
                log, "start_crashed", logging.ERROR, table=table_id, error_type=type(exc).__name__
            )

    async def tick(self) -> int:
        """Claim and start the tables due now; how many were claimed."""
        ids = await self._store.claim_due(self._owner, self._clock(), self._batch, self._timings)
        await asyncio.gather(*(self._start_quietly(table_id) for table_id in ids))
        return len(ids)

    async def run(self, interval_s: float, stop: asyncio.Event) -> None:
        """Tick until ``stop`` is set (a tick in progress finishes); a full batch ticks again
        at once. The flag, not only cancellation, ends it: on Python 3.11 redis-py's
        ``asyncio.wait_for`` can swallow a cancellation that lands as a reply arrives."""
        while not stop.is_set():
            try:
                claimed = await self.tick()
            except Exception as exc:
                event(log, "tick_failed", logging.ERROR, error_type=type(exc).__name__)
                claimed = 0
            if claimed < self._batch:
                with suppress(TimeoutError):
                    async with asyncio.timeout(interval_s):
                        await stop.wait()
