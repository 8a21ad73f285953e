"""The table service's operations, transport-free: what the link and the RPCs ask of a replica.

Each operation finds the table (``Tables.get``: ``no_table``, ``wrong_replica`` with the
owner, or with none where this replica cannot reach the store, ``unavailable`` while a
table changes owner; a request's ``unreachable`` is its gateway's complaint against the
owner, adoption.py), takes the seat from the token, never from
the caller, and refuses with a ``ServiceError`` carrying a stable code. The gRPC
surface (``servicer.py``) and the replica's side of ``Table.Link`` (``link.py``) call
these; so may a caller in this process, which then owns the copying a wire would do.
"""

from __future__ import annotations

from collections.abc import Callable

from services._gen.rackem.v1 import table_pb2
from services.archive.records import MatchRecord
from services.common import tracing
from services.common.errors import ServiceError, StoreUnavailable
from services.table.creation import TABLE_ID, create
from services.table.daily import Daily, public_log
from services.table.feeds import Feed
from services.table.table import Table
from services.table.tables import Tables

__all__ = ["TableService"]


class TableService:
    def __init__(self, tables: Tables) -> None:
        self._tables = tables

    @property
    def tables(self) -> Tables:
        return self._tables

    async def create(self, request: table_pb2.CreateTableRequest) -> table_pb2.CreateTableReply:
        """Create and start a table on this replica (the matchmaker asks; creation.py)."""
        return await create(self._tables, request)

    async def submit(self, request: table_pb2.SubmitMoveRequest) -> int:
        """Apply the seat's move, exactly once per ``move_id``: the table's version after it."""
        table = await self._tables.get(request.table_id, request.unreachable)
        seat = table.seat_for(request.token)
        tracing.annotate("rackem.seat", seat)
        if not request.HasField("move"):
            raise ServiceError("malformed_move", "a move is required")
        expected = request.expected_version if request.HasField("expected_version") else None
        return await table.submit(seat, request.move, request.move_id, expected)

    async def continue_round(self, request: table_pb2.SeatRequest) -> None:
        """Round over: the seat is ready for the next round."""
        table = await self._tables.get(request.table_id, request.unreachable)
        await table.continue_round(table.seat_for(request.token))

    async def leave(self, request: table_pb2.SeatRequest) -> None:
        """The seat leaves for good (a bot takes it); again: nothing more happens."""
        table = await self._tables.get(request.table_id, request.unreachable)
        await table.leave(table.seat_for(request.token, left_ok=True))

    async def subscribe(
        self, request: table_pb2.SeatRequest, notify: Callable[[], None]
    ) -> tuple[Table, Feed]:
        """The seat's subscription, its first view queued (the newest of a seat wins);
        ``notify`` is called as views queue up (``Feed``). ``table.unsubscribe`` it."""
        table = await self._tables.get(request.table_id, request.unreachable)
        return table, await table.subscribe(table.seat_for(request.token), notify)

    async def watch(
        self, request: table_pb2.SummaryRequest, notify: Callable[[], None]
    ) -> tuple[Table, Feed]:
        """A spectator's subscription (public information only), as ``subscribe``'s; refused
        ``no_spectators`` or ``spectators_full``."""
        table = await self._tables.get(request.table_id, request.unreachable)
        return table, await table.watch(notify)

    async def summary(self, request: table_pb2.SummaryRequest) -> table_pb2.TableSummary:
        """Public facts about a table: no hidden cards, no tokens."""
        return await (await self._tables.get(request.table_id)).summary()

    async def record(self, request: table_pb2.SummaryRequest) -> table_pb2.MatchRecord:
        """The finished match's rackem-match/1 log, refused while the match runs.

        With an archive, the archive is asked first and the store (where a record waits
        until it is written) second. While this replica believes the archive away, the
        order turns: the store first, then the archive all the same, since another replica
        may have seen it back and written the record meanwhile (asking it first would make
        every request wait on an archive that does not answer). A record in neither, when
        the archive did not answer, is ``unavailable`` (try again), never ``no_table``: it
        may well be there."""
        archiver = self._tables.archiver
        table_id = request.table_id
        daily = self._tables.config.daily
        if archiver is None or not TABLE_ID.fullmatch(table_id):
            return await (await self._tables.get(table_id)).record()
        asked = False
        if archiver.up:
            asked = True
            try:
                archived = await archiver.record(table_id)
            except StoreUnavailable:
                archived = None
            else:
                if archived is not None:
                    return _record(archived, daily)
                return await (await self._tables.get(table_id)).record()
        try:
            return await (await self._tables.get(table_id)).record()
        except ServiceError as exc:
            if exc.code != "no_table":
                raise
            missing = exc
        if asked:  # the archive just failed to answer
            raise ServiceError("unavailable", "the archive does not answer; try again")
        try:
            archived = await archiver.record(table_id, away_too=True)
        except StoreUnavailable:
            raise ServiceError("unavailable", "the archive does not answer; try again") from None
        if archived is None:
            raise missing
        return _record(archived, daily)

    async def daily(self, request: table_pb2.DailyRequest) -> table_pb2.DailyReply:
        """The Daily Rack of a day (empty: today): its commitment, and its seed once the day
        has closed; a day not yet open is ``bad_request``, no secret ``unavailable``."""
        return self._tables.config.daily.reply(request)


def _record(archived: MatchRecord, daily: Daily) -> table_pb2.MatchRecord:
    """An archived record as it may leave: a Daily Rack match's without its seed while its
    day is open (the archive keeps the seed for when it closes)."""
    return table_pb2.MatchRecord(
        table_id=archived.table_id,
        code=archived.code,
        log_json=public_log(archived.log_json, daily),
    )
