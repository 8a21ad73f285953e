"""Seating players at tables, on the store: quick match, private tables, room codes, seat
tokens, starts, rematches and lobby watching (``Matchmaker``), apart from any message
format; ``service.py`` offers them on ``rackem.v1.Matchmaker``'s messages."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import suppress
from dataclasses import dataclass

from rackcore import Rules
from services.common.errors import ServiceError, StoreUnavailable
from services.common.logs import event
from services.matchmaker.codes import CodeSource, normalize_code
from services.matchmaker.ids import hash_token, new_table_id, new_token, normalize_token
from services.matchmaker.names import clean_name
from services.matchmaker.records import NewTable, Placed, Sitter, TableRecord, Timings
from services.matchmaker.settings import LEVELS
from services.matchmaker.starter import Starter
from services.matchmaker.store import Store
from services.matchmaker.watchers import LobbyWatchers
from services.profiles.levels import nearest_level

__all__ = ["CODE_ATTEMPTS", "Matchmaker", "Seating"]

log = logging.getLogger("rackem.matchmaker")

CODE_ATTEMPTS = 20  # fresh codes tried before giving up (1 in 10^9 each to collide)
DAILY_RULES = Rules(players=2)  # the Daily Rack's: the defaults for two
MAX_PROFILE = 64  # a profile id's length at most (they are 17 characters)


@dataclass(frozen=True, slots=True)
class Seating:
    """A seat token and where it sits now."""

    token: str
    seat: int
    record: TableRecord


def _bad_token() -> ServiceError:
    return ServiceError("bad_token", "unknown or expired seat token")


class Matchmaker:
    def __init__(
        self,
        store: Store,
        starter: Starter,
        watchers: LobbyWatchers,
        timings: Timings,
        *,
        level: str,
        codes: CodeSource,
        clock: Callable[[], int],
        watch_poll_s: float,
    ) -> None:
        self._store = store
        self._starter = starter
        self._watchers = watchers
        self._timings = timings
        self._level = level
        self._codes = codes
        self._clock = clock
        self._watch_poll_s = watch_poll_s

    # -- sitting down ----------------------------------------------------------------------

    async def quick_match(
        self, name: str, players: int, profile: str = "", rating: int = 0
    ) -> Seating:
        """A seat at an open quick-match table of ``players`` in the level window of
        ``rating`` (by_level.py), or at a new one. The match is rated when two or more
        humans sit and each brought a profile (``TableRecord.is_rated``)."""
        sitter, token = self._sitter(name, profile, rating)
        if players not in (2, 3, 4):
            raise ServiceError("bad_request", "players must be 2, 3 or 4")
        rules = Rules(players=players)
        for _ in range(CODE_ATTEMPTS):
            table = NewTable(new_table_id(), self._codes(), True, rules, self._level, -1)
            placed = await self._store.quick_join(
                table, sitter, self._clock(), self._timings, self._starter.owner
            )
            if placed is not None:
                if placed.table_id == table.id:
                    event(log, "table_opened", table=table.id, players=players, public=True)
                return await self._seated(token, placed)
        raise self._no_code()

    async def create_private(
        self,
        name: str,
        rules: Rules,
        level: str,
        start_now: bool,
        spectators: bool = False,
        *,
        profile: str = "",
        rating: int = 0,
        rated: bool = False,
        daily: str = "",
    ) -> Seating:
        """A new private table with its creator in seat 0. ``rated``: every human must
        bring a profile (``profile_required``); bots fill with ``level``, or without one
        the level nearest the creator's ``rating`` (services/profiles/levels.py), or the
        default. ``daily``: the Daily Rack of that day (docs/daily.md), as everyone plays
        it: started now, a profile against the hard computer, default two-player rules,
        unrated, unwatched (``bad_request`` otherwise; the table checks the day)."""
        sitter, token = self._sitter(name, profile, rating)
        if rated and not sitter.profile:
            raise ServiceError("profile_required", "a rated table needs a profile")
        if daily and (
            not sitter.profile
            or not start_now
            or rated
            or spectators
            or level not in ("", "hard")
            or rules != DAILY_RULES
        ):
            raise ServiceError(
                "bad_request",
                "the Daily Rack starts now: a profile against the hard computer, default rules",
            )
        if daily:
            level = "hard"
        if not level and sitter.profile:
            level = nearest_level(sitter.rating)
        level = level or self._level
        if level not in LEVELS:
            raise ServiceError("bad_request", f"level must be one of {', '.join(LEVELS)}")
        for _ in range(CODE_ATTEMPTS):
            table = NewTable(
                new_table_id(),
                self._codes(),
                False,
                rules,
                level,
                0,
                spectators,
                rated=rated,
                daily=daily,
            )
            owner = self._starter.owner if start_now else None
            placed = await self._store.create_private(
                table, sitter, self._clock(), self._timings, owner
            )
            if placed is None:
                continue
            event(log, "table_opened", table=table.id, players=rules.players, public=False)
            if placed.start:  # a new game against the computer: no replica → no game
                record = await self._starter.start(placed.record, "close")
                return Seating(token, placed.seat, record)
            return Seating(token, placed.seat, placed.record)
        raise self._no_code()

    async def join(self, code: str, name: str, profile: str = "", rating: int = 0) -> Seating:
        """A seat at the private table with ``code``; a rated one refuses a joiner without a
        profile (``profile_required``: ``rated`` never changes once the table is made)."""
        sitter, token = self._sitter(name, profile, rating)
        normal = normalize_code(code)
        if normal is None:
            raise ServiceError("no_code", "no waiting table has that code")
        if not sitter.profile:
            table_id = await self._store.table_by_code(normal)
            record = None if table_id is None else await self._store.table(table_id)
            if record is not None and not record.public and record.rated:
                raise ServiceError("profile_required", "this table is rated: it needs a profile")
        placed = await self._store.join_code(
            normal, sitter, self._clock(), self._timings, self._starter.owner
        )
        return await self._seated(token, placed)

    def _sitter(self, name: str, profile: str = "", rating: int = 0) -> tuple[Sitter, str]:
        token = new_token()
        profile = profile.strip()
        if len(profile) > MAX_PROFILE or not profile.isprintable() or " " in profile:
            raise ServiceError("bad_request", "that is not a profile id")
        rating = int(rating) if profile else 0
        return Sitter(clean_name(name), hash_token(token), profile, rating), token

    @staticmethod
    def _no_code() -> ServiceError:
        event(log, "codes_exhausted", logging.ERROR, attempts=CODE_ATTEMPTS)
        return ServiceError("unavailable", "no room code is free right now; try again")

    async def _seated(self, token: str, placed: Placed) -> Seating:
        """The seating after a sit-down; a table made full starts now, as far as it can."""
        record = placed.record
        if placed.start:
            try:
                record = await self._starter.start(record, "retry")
            except ServiceError:  # logged; the table is due again after retry_ms
                record = await self._store.table(placed.table_id) or record
            except StoreUnavailable:  # the seat is stored; its start may not be: a due
                pass  # loop starts the table again once this replica's claim runs out
        return Seating(token, placed.seat, record)

    # -- by token --------------------------------------------------------------------------

    async def _resolve(self, token: str) -> tuple[str, int, str]:
        normal = normalize_token(token)
        if normal is None:
            raise _bad_token()
        found = await self._store.seat_of(hash_token(normal))
        if found is None:
            raise _bad_token()
        return found[0], found[1], normal

    async def locate(self, token: str) -> Seating:
        table_id, seat, normal = await self._resolve(token)
        record = await self._store.table(table_id)
        if record is None:
            raise _bad_token()
        return Seating(normal, seat, record)

    async def start(self, token: str) -> TableRecord:
        """The creator starts a private table now; bots fill the empty seats."""
        seating = await self.locate(token)
        record = seating.record
        if record.public or seating.seat != record.creator_seat:
            raise ServiceError("not_creator", "only the table's creator can start it")
        if record.status == "closed":
            raise ServiceError("no_table", "the table was closed")
        if not await self._starter.claim(record.id):
            raise ServiceError("already_started", "the table has already started")
        return await self._starter.start(record, "wait")

    async def leave(self, token: str) -> TableRecord:
        normal = normalize_token(token)
        if normal is None:
            raise _bad_token()
        record = await self._store.leave(hash_token(normal), self._clock(), self._timings)
        if record.status == "closed":
            event(log, "table_closed", table=record.id)
        return record

    async def lobby(self, code: str) -> TableRecord:
        normal = normalize_code(code)
        table_id = None if normal is None else await self._store.table_by_code(normal)
        record = None if table_id is None else await self._store.table(table_id)
        if record is None:
            raise ServiceError("no_code", "no table has that code")
        return record

    # -- rematch ----------------------------------------------------------------------------

    async def rematch(self, token: str) -> Seating:
        """The token's seat at the rematch of its match: a new table (new id, code and, at
        the table, seed) with the same rules, level, spectators, seats (their profiles) and
        ratedness; a Daily Rack's has none (``no_rematch``); the first to ask
        opens it, each player takes their own seat with a new token. It starts when every
        human answered, or after ``rematch_ms`` with bots for those who did not."""
        table_id, seat, _ = await self._resolve(token)
        old = await self._store.table(table_id)
        if old is None or old.status != "started":
            raise ServiceError("no_rematch", "a rematch follows a match that was played")
        if old.daily:  # one Daily Rack a day (docs/daily.md)
            raise ServiceError("no_rematch", "the Daily Rack is played once a day")
        fresh = new_token()
        mine = old.seats[seat]
        sitter = Sitter(mine.name, hash_token(fresh), mine.profile, mine.rating)
        seats = [(s.name, s.bot) for s in old.seats]
        for _ in range(CODE_ATTEMPTS):
            table = NewTable(
                new_table_id(),
                self._codes(),
                False,
                old.rules,
                old.level,
                -1,
                old.spectators,
                rated=old.is_rated,
            )
            placed = await self._store.rematch(
                old.id,
                table,
                seats,
                seat,
                sitter,
                self._clock(),
                self._timings,
                self._starter.owner,
            )
            if placed is not None:
                if placed.table_id == table.id:
                    event(log, "rematch_opened", table=table.id, rematch_of=old.id)
                return await self._seated(fresh, placed)
        raise self._no_code()

    async def watch_rematch(self, token: str) -> AsyncIterator[TableRecord]:
        """The rematch of the token's match once someone asked, then after every change,
        until it started or closed. Nothing for a match with fewer than two humans: there
        is nobody to tell."""
        table_id, _, _ = await self._resolve(token)
        old = await self._store.table(table_id)
        if old is None or old.status != "started" or old.humans < 2:
            return
        while True:
            with self._watchers.waiter(table_id) as asked:
                rematch_id = await self._store.rematch_of(table_id)
                if rematch_id is not None:
                    break
                if self._watchers.closed:
                    return
                with suppress(TimeoutError):
                    await asyncio.wait_for(asked.wait(), self._watch_poll_s)
        async for record in self._watch(rematch_id):
            yield record

    async def watch(self, token: str) -> AsyncIterator[TableRecord]:
        """The lobby at once, then after every change, until it started or closed."""
        table_id, _, _ = await self._resolve(token)
        async for record in self._watch(table_id):
            yield record

    async def watch_code(self, code: str) -> AsyncIterator[TableRecord]:
        """The same for the table with room code ``code`` (a spectator's): ``no_code``
        if there is none."""
        record = await self.lobby(code)
        async for update in self._watch(record.id):
            yield update

    async def _watch(self, table_id: str) -> AsyncIterator[TableRecord]:
        last = -1
        while True:
            with self._watchers.waiter(table_id) as changed:
                record = await self._store.table(table_id)
                if record is None:
                    return
                if record.version != last:
                    last = record.version
                    yield record
                if record.status in ("started", "closed") or self._watchers.closed:
                    return
                with suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), self._watch_poll_s)
