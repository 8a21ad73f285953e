"""One table: its match, seats and clock state. Every change goes through here.

All reads and writes hold the table's lock. A change is applied in memory, written
to the store (the move log append, fenced by the lease), and only then answered
and broadcast to the table's audience (audience.py: the streams that follow it). If
the store refuses (the lease is another replica's) or fails (outages.py), the table
closes: its in-memory state may be ahead of the store, so it is dropped and rebuilt
from the store by the next request (or the sweeper).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from math import inf
from typing import Any

from rackcore import SPECTATOR, Match, Move, RackError, Rules, observe, to_log
from services._gen.rackem.v1 import game_pb2, table_pb2
from services.common import tracing
from services.common.errors import ServiceError, from_rack
from services.common.lean_sync import Event
from services.common.logs import event
from services.convert import move_from_pb
from services.table.audience import Audience
from services.table.bot_client import BotClient
from services.table.clocks import Facts, Timing, next_step, now_ms
from services.table.daily import Daily
from services.table.feeds import Feed
from services.table.metrics import TableMetrics
from services.table.outages import StoreWait, store_call
from services.table.progress import abandon, after_move, cover, deal, seat_kind
from services.table.replies import Replies
from services.table.store import TableStore
from services.table.stored import Reply, StoredTable, TableMeta, TableState
from services.table.tokens import seat_for
from services.table.views import Seats, seat_facts, summary, table_views

__all__ = ["MAX_MOVE_ID", "Table", "TableConfig"]

log = logging.getLogger("rackem.table")

MAX_MOVE_ID = 64


@dataclass(frozen=True, slots=True)
class TableConfig:
    """What a table needs to know about its replica and its clocks."""

    store: TableStore
    owner: str  # the lease value: "replica-id address"
    replica: str  # the advertised address
    decision_ms: int
    continue_ms: int
    stream_queue: int
    timing: Timing
    spectators_cap: int = 50  # watchers at once, at a table open to spectators
    lease_ms: int = 0  # each append and save renews the lease this long (0: they do not)
    # While the store is unreachable (``StoreUnavailable``) a store call is tried again
    # for up to this long, the table's lock held: its moves wait instead of failing.
    store_hold_ms: int = 0
    metrics: TableMetrics | None = None  # the replica's (none: a table in a test, or a replay)
    # The Daily Rack (its secret and its day's clock): a daily table keeps its seed in
    # while its day is open (daily.py).
    daily: Daily = field(default_factory=Daily)


class Table(Audience):
    def __init__(
        self,
        meta: TableMeta,
        state: TableState,
        match: Match,
        config: TableConfig,
        *,
        live: bool,
        adopted: bool = False,
    ) -> None:
        self.meta = meta
        self.state = state
        self.match = match
        self.config = config
        self.live = live  # False: a finished table read back from the store
        self.lock = asyncio.Lock()
        self.changed = Event()  # set on every change; the driver waits on it
        # When (monotonic) the lease was last renewed, or taken: an append or a save sent
        # then renewed it, so the renewal round leaves a busy table out.
        self.lease_renewed = time.monotonic()
        # While the driver waits: when it looks again by itself (unix ms; inf: only when
        # woken). A change that brings nothing sooner need not wake it (``_push``).
        self.planned_at: float | None = None
        self.closed: ServiceError | None = None
        self.storing = StoreWait()  # the store call under way, cut short by ``close``
        now = now_ms()
        self.last_change_ms = now
        super().__init__(len(meta.seats), now)  # the audience: nobody follows yet
        self._seat_of: dict[str, int] = {}  # tokens already matched to their seat's hash
        self._replies = Replies(config.store, meta.table_id, adopted)

    @classmethod
    def rebuild(cls, stored: StoredTable, config: TableConfig, *, live: bool) -> Table:
        """The table from its stored meta, state and log, replayed through rackcore."""
        meta = stored.meta
        match = Match(Rules.from_dict(meta.rules), bytes.fromhex(meta.seed))
        for data in stored.moves:
            match.apply(Move.from_dict(data))
        if match.phase == "round_over" and stored.state.dealt_round > match.round_no:
            match.next_round()
        return cls(meta, stored.state, match, config, live=live, adopted=True)

    # -- reading (callers hold the lock, or need no consistency) --------------

    @property
    def table_id(self) -> str:
        return self.meta.table_id

    @property
    def version(self) -> int:
        return len(self.match.history)

    @property
    def over(self) -> bool:
        return self.state.over

    def kind(self, seat: int) -> str:
        return seat_kind(self.meta, self.state, seat)

    def seat_for(self, token: str, *, left_ok: bool = False) -> int:
        """The seat ``token`` holds; ``bad_token`` if none (or it left, unless ``left_ok``)."""
        seat = self._seat_of.get(token)
        if seat is None:
            seat = seat_for([s.token_hash for s in self.meta.seats], token)
            if seat is None:
                raise ServiceError("bad_token", "that token holds no seat at this table")
            if len(self._seat_of) < len(self.meta.seats):  # only tokens that hold a seat
                self._seat_of[token] = seat
        if self.state.left[seat] and not left_ok:
            raise ServiceError("bad_token", "that seat was left; a bot plays it now")
        return seat

    def facts(self) -> Facts:
        n = len(self.meta.seats)
        return Facts(
            status=self.state.status,
            turn=self.match.turn,
            kinds=tuple(self.kind(s) for s in range(n)),
            connected=self.connected(),
            continued=tuple(self.state.continued),
            deadline_ms=self.state.deadline_ms,
            continue_deadline_ms=self.state.continue_deadline_ms,
            last_change_ms=self.last_change_ms,
            alone_since_ms=self.alone_since_ms,
            away_since_ms=tuple(self.away_since_ms),
        )

    def _seats(self) -> Seats:
        kinds = [self.kind(s) for s in range(len(self.meta.seats))]
        return seat_facts(self.meta, kinds, self.connected(), self.state)

    def _views(self, now: int, extra: int | None = None) -> dict[int, game_pb2.TableView]:
        seats = self._seats()
        wanted = set(self._subs) | ({extra} if extra is not None else set())
        if self._watchers:
            wanted.add(SPECTATOR)
        watchers = len(self._watchers)
        hide = self.seed_hidden()
        return table_views(self.meta, self.match, self.state, seats, wanted, now, watchers, hide)

    # -- requests ----------------------------------------------------------------

    async def submit(
        self, seat: int, msg: game_pb2.Move, move_id: str, expected: int | None
    ) -> int:
        """Apply ``seat``'s move, exactly once per ``move_id``: the table's version after it."""
        if not move_id or len(move_id) > MAX_MOVE_ID:
            raise ServiceError(
                "bad_request", f"a move needs an id of 1 to {MAX_MOVE_ID} characters"
            )
        async with self.lock:
            self._check_open()
            earlier = await store_call(self, lambda: self._replies.earlier(seat, move_id))
            if earlier is not None:
                if not self._logged(seat, earlier):
                    self._stale_reply(move_id, earlier)
                return earlier
            if self.over:
                raise ServiceError("match_over", "the match is over")
            if expected is not None and expected != self.version:
                raise ServiceError("stale_version", f"the table is at version {self.version}")
            try:
                move = move_from_pb(msg, seat=seat, by="human")
            except RackError as exc:
                raise from_rack(exc) from None
            if self.state.status == "round_over":
                raise ServiceError("illegal_move", "the round is over: continue to the next one")
            try:
                self.match.apply(move)
            except RackError as exc:
                raise from_rack(exc) from None
            now = now_ms()
            self.state.covered[seat] = False
            self._after_move(now)
            views = self._views(now)
            version = self.version
            await self._append(move, Replies.record(seat, move_id, version))
            self._replies.remember(seat, move_id, version)
            self._push(views)
            return version

    async def subscribe(self, seat: int, notify: Callable[[], None]) -> Feed:
        """A new stream for ``seat`` (ending the seat's older one), its first view queued;
        ``notify``: see ``Feed``."""
        async with self.lock:
            self._check_open()
            sub = Feed(seat, self.config.stream_queue, notify)
            if not self.live or self.over:
                sub.push(self._views(now_ms(), extra=seat)[seat])
                sub.end()
                return sub
            now = now_ms()
            self._follow(seat, sub, now)
            self._push(self._views(now))
            return sub

    async def watch(self, notify: Callable[[], None]) -> Feed:
        """A spectator's stream (public information only), its first view queued; refused
        ``no_spectators`` unless the table is open to them, ``spectators_full`` at its cap.
        A watcher is never a seat: it is not ``connected`` and changes no clock."""
        async with self.lock:
            self._check_open()
            if not self.meta.spectators:
                raise ServiceError("no_spectators", "this table is not open to spectators")
            sub = Feed(SPECTATOR, self.config.stream_queue, notify)
            now = now_ms()
            if not self.live or self.over:
                sub.push(self._views(now, extra=SPECTATOR)[SPECTATOR])
                sub.end()
                return sub
            self._watch(sub, self.config.spectators_cap)
            self._push(self._views(now))
            return sub

    async def continue_round(self, seat: int) -> None:
        """Round over: ``seat`` is ready (and back from any cover). During play, a covered
        seat takes itself back (its clock starts again on its turn). Else a no-op."""
        async with self.lock:
            self._check_open()
            if not self.live:
                return
            if self.state.status == "playing" and self.state.covered[seat]:
                await self._uncover(seat)
                return
            if self.state.status != "round_over":
                return
            if self.state.continued[seat] and not self.state.covered[seat]:
                return
            self.state.continued[seat] = True
            self.state.covered[seat] = False
            await self._save()
            self._push(self._views(now_ms()))

    async def _uncover(self, seat: int) -> None:
        now = now_ms()
        self.state.covered[seat] = False
        if self.match.turn == seat:
            self.state.deadline_ms = now + self.config.decision_ms
        self.last_change_ms = now
        await self._save()
        self._push(self._views(now))

    async def leave(self, seat: int) -> None:
        """``seat`` leaves for good: a bot plays it from now on, and its stream ends."""
        async with self.lock:
            self._check_open()
            if self.over or not self.live or self.state.left[seat]:
                return
            self.state.left[seat] = True
            self.state.covered[seat] = False
            if self.match.turn == seat and self.state.status == "playing":
                self.state.deadline_ms = 0
            await self._save()
            now = now_ms()
            self._let_go(seat, now)
            self._push(self._views(now))
            event(log, "seat_left", table=self.table_id, seat=seat)

    async def summary(self) -> table_pb2.TableSummary:
        async with self.lock:
            self._check_open()
            return summary(self.meta, self.match, self.state, self._seats(), self.config.replica)

    async def record(self) -> table_pb2.MatchRecord:
        """The match log with the seed revealed, once the table is over (a daily table's
        once its day has closed)."""
        async with self.lock:
            self._check_open()
            if not self.over:
                raise ServiceError("illegal_move", "the match is not over")
            return table_pb2.MatchRecord(
                table_id=self.table_id, code=self.meta.code, log_json=self.log_json(public=True)
            )

    def seed_hidden(self) -> bool:
        """A daily table whose day is still open: its seed stays in (daily.py)."""
        return self.config.daily.hides_seed(self.meta.daily)

    def match_log(self, *, public: bool = False) -> dict[str, Any]:
        """The ``rackem-match/1`` object with the seed revealed: only for a table that is
        over. ``public``: as it may leave the service (the log line, ``GetRecord``): a
        daily table's without its seed while its day is open."""
        return to_log(self.match, reveal=not (public and self.seed_hidden()))

    def log_json(self, *, public: bool = False) -> str:
        """``match_log()`` as the JSON text a record carries (``GetRecord``; the archive
        keeps the seed: it leaves through ``GetRecord`` only)."""
        return json.dumps(self.match_log(public=public), separators=(",", ":"))

    # -- what the table does by itself (the driver calls these) ----------------

    async def flush_seats(self) -> None:
        async with self.lock:
            if self.closed is None and self.seats_dirty:
                self.seats_dirty = False
                self._push(self._views(now_ms()))

    async def act(self, bots: BotClient) -> None:
        """Do the step that is due now, if it still is once the lock is held."""
        async with self.lock:
            if self.closed is not None:
                return
            now = now_ms()
            step = next_step(self.facts(), self.config.timing)
            if step.action in ("done", "wait") or step.at_ms > now:
                return
            if step.action != "bot":
                if step.action == "abandon":
                    abandon(self.state)
                    event(log, "table_abandoned", table=self.table_id, version=self.version)
                elif step.action == "deal":
                    deal(self.match, self.meta, self.state, now, self.config.decision_ms)
                    self.last_change_ms = now
                else:
                    cover(self.state, step.seat)
                    event(log, "seat_covered", table=self.table_id, seat=step.seat)
                await self._save()
                self._push(self._views(now))
                return
            version, seat = self.version, step.seat
            view = observe(self.match, seat)
            level = self.meta.seats[seat].level
        with tracing.span("bot move", attributes={"rackem.seat": seat}):
            move = await bots.choose(view, level)
            tracing.annotate("rackem.move.act", move.act)
            await self._bot_move(seat, version, move)

    async def _bot_move(self, seat: int, version: int, move: Move) -> None:
        async with self.lock:
            kind = self.kind(seat)
            if (
                self.closed is not None
                or self.version != version
                or self.state.status != "playing"
                or self.match.turn != seat
                or kind == "human"
            ):
                return  # the table moved on while the bot thought
            move = move.with_by(kind)
            try:
                self.match.apply(move)
            except RackError as exc:
                event(log, "bot_illegal_move", logging.ERROR, table=self.table_id, code=exc.code)
                move = self.match.legal_moves()[0].with_by(kind)
                self.match.apply(move)
            now = now_ms()
            self._after_move(now)
            views = self._views(now)
            await self._append(move, None)
            self._push(views)

    def close(self, error: ServiceError) -> None:
        """Stop serving: every stream ends with ``error``; later calls raise it."""
        if self.closed is None:
            self.closed = error
        self.end_streams(error)
        self.changed.set()
        # A store call under way (its lock held) answers ``error`` now, not once the store
        # does: closed from elsewhere while it waits, it would wait for nothing.
        self.storing.interrupt()

    # -- internals ---------------------------------------------------------------

    def _check_open(self) -> None:
        if self.closed is not None:
            raise self.closed

    def _after_move(self, now: int) -> None:
        self.last_change_ms = now
        config = self.config
        after_move(self.match, self.meta, self.state, now, config.decision_ms, config.continue_ms)

    def _wake_driver(self) -> None:
        """Wake the driver, unless it is waiting and its next step comes no sooner now: it
        looks again at its planned time in any case (a move that resets the clock). Called
        soon after a change, not in it: the change's views and answer go out first."""
        self._wake_due = False
        planned = self.planned_at
        if planned is not None and not self.seats_dirty:
            step = next_step(self.facts(), self.config.timing)
            if step.action == "wait":
                if planned == inf:
                    return
            elif step.action != "done" and step.at_ms >= planned:
                return
        self.changed.set()

    async def _append(self, move: Move, reply: Reply | None) -> None:
        config = self.config
        sent = time.monotonic()
        result = await store_call(
            self,
            lambda: config.store.append(
                self.table_id,
                config.owner,
                self.version - 1,
                move.to_dict(),
                self.state,
                reply,
                lease_ms=config.lease_ms,
            ),
        )
        if result != "ok":
            self._lost(result)
        if config.lease_ms:
            self.lease_renewed = sent

    async def _save(self) -> None:
        config = self.config
        sent = time.monotonic()
        if not await store_call(
            self,
            lambda: config.store.save_state(
                self.table_id, config.owner, self.state, config.lease_ms
            ),
        ):
            self._lost("lost")
        if config.lease_ms:
            self.lease_renewed = sent

    def _logged(self, seat: int, version: int) -> bool:
        """Whether the log this table serves holds a move of ``seat``'s human at
        ``version``. A retried move id is answered with the version the store kept for it
        only then: the store keeps the two in one script, so they disagree only where the
        answer was read from another copy of the store than the log (a primary that a
        failover replaced, holding a write no replica has: never to be acknowledged)."""
        if not 0 < version <= self.version:
            return False
        logged = self.match.history[version - 1]
        return logged.seat == seat and logged.by in (None, "human")

    def _stale_reply(self, move_id: str, version: int) -> None:
        """The store kept an answer for ``move_id`` that the log does not hold: not given.
        The table closes (it is rebuilt from the store by the next request; the client
        sends the move again by its id)."""
        event(log, "reply_not_in_log", logging.WARNING, table=self.table_id, version=version)
        error = ServiceError("unavailable", "the table store is changing; try again")
        self.close(error)
        raise error

    def _lost(self, why: str) -> None:
        event(log, "table_lost", logging.WARNING, table=self.table_id, why=why)
        if why == "lost" and self.config.metrics is not None:  # fenced: another holds the lease
            self.config.metrics.fenced_writes.inc()
        error = ServiceError("unavailable", "the table changed replicas; try again")
        self.close(error)
        raise error
