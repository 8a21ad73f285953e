"""Who follows one table: each seat's stream, and the spectators' (the watchers').

A seat with a stream is ``connected``, and that counts for the clocks: since when each
seat has had no stream (its reconnect grace) and since when no human has had one (the
abandon timer). A watcher never counts: it is no seat, keeps no clock waiting, deals no
round and stops no cover. Each change's views are handed to every follower at once,
without waiting (``_push``): one whose queue is full is dropped, its stream ending
``unavailable`` (the gateway subscribes again), and the seats are broadcast again soon
after (``seats_dirty``), as when any stream ends. ``end_streams`` ends them all.

``Table`` (table.py) is built on ``Audience``, so that pushing a change's views is one
of the table's own methods, with nothing between the table and its streams. The table
provides ``table_id``, ``kind``, ``changed`` and ``_wake_driver``.
"""

from __future__ import annotations

import asyncio
import logging

from rackcore import SPECTATOR
from services._gen.rackem.v1 import game_pb2
from services.common.errors import ServiceError
from services.common.lean_sync import Event
from services.common.logs import event
from services.table.clocks import now_ms
from services.table.feeds import Feed

__all__ = ["Audience"]

log = logging.getLogger("rackem.table")


class Audience:
    """The streams that follow one table's views, and since when each seat has had none."""

    changed: Event  # the table's: set on every change; its driver waits on it

    def __init__(self, seats: int, now: int) -> None:
        self._seat_count = seats
        self.seats_dirty = False  # a stream ended: the seats need a broadcast
        self.alone_since_ms: int | None = now
        # per seat: since when it has had no stream (the reconnect grace counts from it)
        self.away_since_ms: list[int | None] = [now] * seats
        self._subs: dict[int, Feed] = {}
        # Spectators' streams: never a seat's, so never "connected" for clocks, covers,
        # grace or abandonment; every watcher gets the same public view.
        self._watchers: set[Feed] = set()
        self._wake_due = False  # a wake-up check is scheduled after this turn's writes

    # -- what the table provides -------------------------------------------------------

    @property
    def table_id(self) -> str:
        raise NotImplementedError

    def kind(self, seat: int) -> str:
        raise NotImplementedError

    def _wake_driver(self) -> None:
        raise NotImplementedError

    # -- who follows -------------------------------------------------------------------

    def connected(self) -> tuple[bool, ...]:
        return tuple(seat in self._subs for seat in range(self._seat_count))

    @property
    def watchers(self) -> int:
        return len(self._watchers)

    def _follow(self, seat: int, sub: Feed, now: int) -> None:
        """``sub`` is ``seat``'s stream from now on; the seat's older one ends."""
        older = self._subs.get(seat)
        if older is not None:
            older.end()
        self._subs[seat] = sub
        self._connections_changed(now)

    def _watch(self, sub: Feed, cap: int) -> None:
        """``sub`` watches; refused ``spectators_full`` with ``cap`` watchers already."""
        if len(self._watchers) >= cap:
            raise ServiceError("spectators_full", "this table has as many spectators as it takes")
        self._watchers.add(sub)

    def _let_go(self, seat: int, now: int) -> None:
        """``seat``'s stream, if it has one, ends cleanly (the seat left)."""
        sub = self._subs.pop(seat, None)
        if sub is not None:
            sub.end()
        self._connections_changed(now)

    def unsubscribe(self, sub: Feed) -> None:
        """A stream ended; the driver broadcasts the seat's new ``connected`` soon after."""
        if sub.seat == SPECTATOR:
            if sub in self._watchers:
                self._watchers.discard(sub)
                self.seats_dirty = True  # the count of watchers: shown to everyone
                self.changed.set()
            return
        if self._subs.get(sub.seat) is sub:
            del self._subs[sub.seat]
            self._connections_changed(now_ms())
            self.seats_dirty = True
            self.changed.set()

    def end_streams(self, error: ServiceError | None = None) -> None:
        """Every stream ends: cleanly after its queued views, or at once with ``error``."""
        for sub in (*self._subs.values(), *self._watchers):
            sub.end(error)
        self._subs.clear()
        self._watchers.clear()

    def _connections_changed(self, now: int) -> None:
        for seat, since in enumerate(self.away_since_ms):
            if seat in self._subs:
                self.away_since_ms[seat] = None
            elif since is None:
                self.away_since_ms[seat] = now
        humans = any(self.kind(s) != "bot" for s in self._subs)
        if humans:
            self.alone_since_ms = None
        elif self.alone_since_ms is None:
            self.alone_since_ms = now
        self.changed.set()

    # -- a change's views --------------------------------------------------------------

    def _push(self, views: dict[int, game_pb2.TableView]) -> None:
        for seat, sub in list(self._subs.items()):
            view = views.get(seat)
            if view is not None and not sub.push(view):
                del self._subs[seat]
                sub.end(ServiceError("unavailable", "the stream fell behind; subscribe again"))
                self._connections_changed(now_ms())
                self.seats_dirty = True
                event(log, "subscriber_dropped", logging.WARNING, table=self.table_id, seat=seat)
        public = views.get(SPECTATOR)
        if public is not None:
            for sub in list(self._watchers):
                if not sub.push(public):
                    self._watchers.discard(sub)
                    sub.end(ServiceError("unavailable", "the stream fell behind; watch again"))
                    self.seats_dirty = True
                    event(log, "watcher_dropped", logging.WARNING, table=self.table_id)
        if not self._wake_due:  # after the views just pushed are written (the loop's order)
            self._wake_due = True
            asyncio.get_running_loop().call_soon(self._wake_driver)
