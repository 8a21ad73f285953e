"""The tables this replica owns: creating, finding or adopting, finishing and handing over.

A request for a table this replica does not hold finds the table's lease:
free → take it, rebuild the table from its log, serve it; held by a live replica →
``wrong_replica`` with that replica's address. A sweeper adopts live tables whose
lease expired, so bot-only progress never stops when an owner dies.

Background work is proportional to this replica's own tables, not to the fleet: every
append and save renews its table's lease; every third of the lease, one batched call
renews the idle ones and one call per index shard notes every table's expiry in the
lease index (services/table/store/lease_index.py). A sweep asks the index how many leases
expired (one call per shard) and claims at most this replica's fair share of them, so
a dead or drained replica's tables spread over the others instead of piling onto
the first sweeper. The replica heartbeats its load into the registry. ``drain``
(SIGTERM) closes every table and releases its lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import re
import secrets
import time
from collections.abc import Awaitable, Callable

from rackcore import Match, RulesError, commitment
from rackcore.bots import LEVELS
from services._gen.rackem.v1 import game_pb2, table_pb2
from services.common.cancelling import cancel_until_done
from services.common.errors import ServiceError
from services.common.logs import event
from services.common.names import name_problem
from services.common.redis_client import is_outage
from services.common.registry import Registry, Replica
from services.convert import rules_from_pb
from services.table.bot_client import BotClient
from services.table.clocks import now_ms
from services.table.driver import drive
from services.table.settings import TableSettings
from services.table.store.lease_index import FINISHED
from services.table.stored import SeatMeta, StoredTable, TableMeta, TableState
from services.table.table import Table, TableConfig
from services.table.tokens import is_token_hash, new_token, token_hash

__all__ = ["Tables", "owner_string", "parse_owner"]

log = logging.getLogger("rackem.table")

_TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_CODE = 16


def owner_string(replica_id: str, addr: str) -> str:
    return f"{replica_id} {addr}"


def parse_owner(owner: str) -> tuple[str, str]:
    replica_id, _, addr = owner.partition(" ")
    return replica_id, addr


def _checked_name(name: str, seat: int, bot: bool) -> str:
    name = name.strip()
    if bot and not name:
        return f"Bot {seat + 1}"
    problem = name_problem(name)
    if problem is not None:
        raise ServiceError("bad_name", problem)
    return name


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
        self._pending: dict[str, asyncio.Future[Table]] = {}
        self._loops: list[asyncio.Task[None]] = []
        self._corrupt: set[str] = set()  # tables whose log would not replay: not swept again
        # Whether the last heartbeat reached the store's Redis: a replica that cannot is
        # not ready (it can serve no table), and ``on_reachable`` (the server's health)
        # hears each change.
        self.reachable = True
        self.on_reachable: Callable[[bool], Awaitable[None]] | None = None

    # -- background work -----------------------------------------------------------

    async def start(self) -> None:
        await self._heartbeat()
        s = self.settings
        self._loops = [
            asyncio.create_task(self._every(s.heartbeat_ms, self._heartbeat, "heartbeat")),
            asyncio.create_task(self._every(s.lease_ms // 3, self._renew, "renew")),
            asyncio.create_task(self._every(s.sweep_ms, self._sweep, "sweep")),
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

    async def _heartbeat(self) -> None:
        replica = Replica(self.replica_id, self.config.replica, len(self.live), self.draining)
        try:
            await self.registry.heartbeat(replica, self.settings.heartbeat_ttl_ms)
        except Exception:
            await self._reached(False)
            raise
        await self._reached(True)

    async def _reached(self, reachable: bool) -> None:
        if reachable == self.reachable or self.draining:
            return
        self.reachable = reachable
        event(log, "store_reachable" if reachable else "store_unreachable", logging.WARNING)
        if self.on_reachable is not None:
            await self.on_reachable(reachable)

    async def _renew(self) -> None:
        """The idle tables' leases in one store call (an append or a save renewed the
        others), then every table's expiry noted in the lease index; a table whose lease
        is lost closes."""
        lease_ms = self.settings.lease_ms
        period = lease_ms // 3 / 1000
        now = time.monotonic()
        idle = [(t_id, t) for t_id, t in self.live.items() if now - t.lease_renewed >= period]
        if idle:
            held = await self.store.renew_many(
                [t_id for t_id, _ in idle], self.config.owner, lease_ms
            )
            for (table_id, table), renewed in zip(idle, held, strict=True):
                if renewed:
                    table.lease_renewed = max(table.lease_renewed, now)
                elif self.live.get(table_id) is table:  # else it retired meanwhile
                    event(log, "lease_lost", logging.WARNING, table=table_id)
                    async with table.lock:
                        table.close(
                            ServiceError("unavailable", "the table changed replicas; try again")
                        )
        await self._note(list(self.live.values()))

    async def _note(self, tables: list[Table]) -> None:
        """Note in the lease index when each of ``tables``' leases expires."""
        if not tables:
            return
        now = time.monotonic()
        ages = [(t.table_id, max(0, int((now - t.lease_renewed) * 1000))) for t in tables]
        await self.store.note_leases(ages, self.settings.lease_ms)

    async def _sweep(self) -> None:
        """Adopt at most this replica's fair share of the tables whose lease expired."""
        if self.draining:
            return
        expired = await self.store.expired_count()
        if not expired:
            return
        share = await self._fair_share(expired)
        claim_ms = self.settings.lease_ms  # a claim holds as long as a lease would
        ids = [
            table_id
            for table_id in await self.store.claim_expired(share, claim_ms)
            if table_id not in self.live
            and table_id not in self._pending
            and table_id not in self._corrupt
        ]
        # Side by side: a dead replica's tables are taken over together, not one by one.
        # A ServiceError: another replica was quicker, the lease is still held, or it is gone.
        taken = await asyncio.gather(
            *(self._get(table_id, sweeping=True) for table_id in ids), return_exceptions=True
        )
        # A lease its dead owner still holds for a moment (the index is noted a little
        # early): back in the index for the next sweep, not after the whole claim.
        soon = [
            (table_id, self.settings.lease_ms - self.settings.sweep_ms)
            for table_id, result in zip(ids, taken, strict=True)
            if isinstance(result, ServiceError) and result.code == "unavailable"
        ]
        if soon:
            await self.store.note_leases(soon, self.settings.lease_ms)

    async def _fair_share(self, expired: int) -> int:
        """How many of ``expired`` orphans to claim now: enough to bring this replica up to
        the fleet's mean load, and at least one (so orphans never wait on a replica that
        does not sweep), at most all of them."""
        others = [
            r for r in await self.registry.live() if r.id != self.replica_id and not r.draining
        ]
        mine = len(self.live)
        mean = math.ceil((sum(r.load for r in others) + mine + expired) / (len(others) + 1))
        return min(expired, max(1, mean - mine))

    # -- creating ----------------------------------------------------------------------

    async def create(self, request: table_pb2.CreateTableRequest) -> table_pb2.CreateTableReply:
        if self.draining:
            raise ServiceError("shutting_down", "this replica is shutting down; try another")
        table_id = request.table_id or f"t{secrets.token_hex(8)}"
        if not _TABLE_ID.fullmatch(table_id):
            raise ServiceError("bad_request", "a table id is 1 to 64 letters, digits, _ or -")
        if len(request.code) > MAX_CODE or not request.code.isprintable():
            raise ServiceError("bad_request", f"a room code is at most {MAX_CODE} characters")
        rules_msg = game_pb2.Rules()
        rules_msg.CopyFrom(request.rules)
        if not rules_msg.HasField("players"):
            rules_msg.players = len(request.seats)
        try:
            rules = rules_from_pb(rules_msg)
        except RulesError as exc:
            raise ServiceError("bad_rules", str(exc)) from None
        if len(request.seats) != rules.players:
            raise ServiceError("bad_request", f"the rules need {rules.players} seats")
        seats, tokens = [], []
        for seat, spec in enumerate(request.seats):
            level = spec.level or "medium"
            if level not in LEVELS:
                raise ServiceError("bad_request", f"level must be one of {', '.join(LEVELS)}")
            token, digest = "", spec.token_hash.lower()
            if spec.bot:
                if digest:
                    raise ServiceError("bad_request", "a bot seat has no token")
            elif not digest:
                token = new_token()
                digest = token_hash(token)
            elif not is_token_hash(digest):
                raise ServiceError("bad_request", "token_hash is a hex SHA-256")
            seats.append(
                SeatMeta(_checked_name(spec.name, seat, spec.bot), spec.bot, level, digest)
            )
            tokens.append(token)
        seed = secrets.token_bytes(32)
        match = Match(rules, seed)
        now = now_ms()
        meta = TableMeta(
            table_id,
            request.code,
            rules.to_dict(),
            seed.hex(),
            tuple(seats),
            now,
            spectators=request.spectators,
        )
        table = Table(meta, TableState.new(rules.players), match, self.config, live=True)
        table.state.deadline_ms = (
            now + self.settings.decision_ms if not seats[match.turn].bot else 0
        )
        if not await self.store.create(
            meta, table.state, self.config.owner, self.settings.lease_ms
        ):
            return await self._created_before(meta, any(tokens))
        self._serve(table)
        bots = sum(s.bot for s in seats)
        event(log, "table_created", table=table_id, players=rules.players, bots=bots)
        return table_pb2.CreateTableReply(
            table_id=table_id,
            tokens=tokens,
            commitment=match.commitment or "",
            replica=self.config.replica,
        )

    async def _created_before(
        self, meta: TableMeta, made_tokens: bool
    ) -> table_pb2.CreateTableReply:
        """A repeated CreateTable (its reply was lost): the same table again, once more.

        Only a table whose tokens all came with the request can be answered twice: a
        token the table made is never given out again.
        """
        stored = await self.store.load(meta.table_id)
        same = stored is not None and (
            stored.meta.code,
            stored.meta.rules,
            stored.meta.seats,
            stored.meta.spectators,
        ) == (meta.code, meta.rules, meta.seats, meta.spectators)
        if stored is None or not same or made_tokens:
            raise ServiceError("bad_request", "that table id is already in use")
        replica = self.config.replica
        holder = await self.store.holder(meta.table_id)
        if holder is not None:
            replica = parse_owner(holder)[1] or replica
        elif not stored.state.over:
            replica = (await self.get(meta.table_id)).config.replica
        return table_pb2.CreateTableReply(
            table_id=meta.table_id,
            tokens=[""] * len(meta.seats),
            commitment=commitment(bytes.fromhex(stored.meta.seed)),
            replica=replica,
        )

    # -- finding ------------------------------------------------------------------------

    async def get(self, table_id: str) -> Table:
        """The table, served here: owned already, adopted now, or read back once over."""
        table = self.live.get(table_id)
        if table is not None:
            return table
        if not _TABLE_ID.fullmatch(table_id):
            raise ServiceError("no_table", "no such table")
        return await self._get(table_id, sweeping=False)

    async def _get(self, table_id: str, sweeping: bool) -> Table:
        pending = self._pending.get(table_id)
        if pending is None:
            pending = asyncio.ensure_future(self._adopt(table_id, sweeping))
            self._pending[table_id] = pending
            pending.add_done_callback(lambda done: self._adopted(table_id, done))
        return await asyncio.shield(pending)

    def _adopted(self, table_id: str, done: asyncio.Future[Table]) -> None:
        self._pending.pop(table_id, None)
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
        stored = await self.store.load(table_id)
        if stored is None:
            if sweeping:
                await self.store.forget(table_id)
            raise ServiceError("no_table", "no such table")
        if stored.state.over:
            return await self._read_only(stored, sweeping)
        owner = self.config.owner
        holder = await self.store.holder(table_id)
        if holder == FINISHED:  # finished since it was loaded
            return await self._take(table_id, sweeping)
        if holder is not None and holder != owner:
            raise await self._elsewhere(holder)
        if self.draining:
            raise ServiceError("shutting_down", "this replica is shutting down; try again")
        holder = await self.store.acquire(table_id, owner, self.settings.lease_ms)
        if holder is not None:
            raise await self._elsewhere(holder)
        try:
            stored = await self.store.load(table_id)  # again: the last owner may have moved on
            if stored is None:
                raise ServiceError("no_table", "no such table")
            if stored.state.over:
                await self.store.release(table_id, owner)
                return await self._read_only(stored, sweeping)
            table = self._rebuild(stored)
        except BaseException:
            await self.store.release(table_id, owner)
            raise
        self._serve(table)
        event(log, "table_adopted", table=table_id, version=table.version, swept=sweeping)
        with contextlib.suppress(Exception):  # else the next renewal round notes it
            await self._note([table])
        return table

    def _rebuild(self, stored: StoredTable) -> Table:
        try:
            return Table.rebuild(stored, self.config, live=True)
        except Exception:  # a log rackcore refuses: no replica can ever serve this table
            table_id = stored.meta.table_id
            log.error("table_corrupt", extra={"fields": {"table": table_id}}, exc_info=True)
            self._corrupt.add(table_id)
            raise ServiceError("unavailable", "the table cannot be served") from None

    async def _read_only(self, stored: StoredTable, sweeping: bool) -> Table:
        table = Table.rebuild(stored, self.config, live=False)
        if sweeping:  # over but still listed live
            owner = self.config.owner
            holder = await self.store.acquire(table.table_id, owner, self.settings.lease_ms)
            if holder is None:  # its owner died before finishing it: finish it here
                await self._finish(table)
            elif holder == FINISHED:  # finished, and about to leave the index
                await self.store.forget(table.table_id)
        return table

    async def _elsewhere(self, holder: str) -> ServiceError:
        replica_id, addr = parse_owner(holder)
        live = {r.id for r in await self.registry.live()}
        if replica_id in live and addr:
            return ServiceError("wrong_replica", "another replica serves this table", owner=addr)
        return ServiceError("unavailable", "the table is changing replicas; try again")

    # -- serving and retiring --------------------------------------------------------

    def _serve(self, table: Table) -> None:
        if self.draining:  # adopted while draining began: hand it straight back
            table.close(ServiceError("shutting_down", "this replica is shutting down"))
        self.live[table.table_id] = table
        self._drivers[table.table_id] = asyncio.create_task(self._run(table))

    async def _run(self, table: Table) -> None:
        try:
            await drive(table, self.bots)
        except Exception:
            log.error("driver_failed", extra={"fields": {"table": table.table_id}}, exc_info=True)
            async with table.lock:
                table.close(ServiceError("unavailable", "the table is restarting; try again"))
        try:
            if table.closed is None and table.over:
                async with table.lock:
                    await self._finish(table)
            else:
                await self.store.release(table.table_id, self.config.owner)
        except Exception:
            log.error("retire_failed", extra={"fields": {"table": table.table_id}}, exc_info=True)
        finally:
            if self.live.get(table.table_id) is table:
                del self.live[table.table_id]
            self._drivers.pop(table.table_id, None)

    async def _finish(self, table: Table) -> None:
        """Finish the table in the store (one atomic step, fenced by the lease); only the
        replica whose finish that was logs the match record. End the streams."""
        ttl = self.settings.finished_ttl_ms
        if await self.store.finish(table.table_id, self.config.owner, table.state, ttl):
            event(
                log,
                "match_record",
                code=table.meta.code,
                table=table.table_id,
                reason=table.state.ended_reason,
                match=table.match_log(),
            )
        table.end_streams()

    async def drain(self) -> None:
        """Stop taking tables, close each one (its streams end ``shutting_down``), release it."""
        self.draining = True
        # Cancelled again until they end: a loop's cancellation can be swallowed by a
        # Redis call (services/common/cancelling.py), and it would then go on forever.
        await asyncio.gather(*(cancel_until_done(loop) for loop in self._loops))
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
