"""Exactly-once answers for one table: every accepted move id's version, each seat's latest reply.

A retried move id gets the very reply it had, when it is the seat's latest move (the
case of a lost answer); an older id gets its version with the seat's view now. A
table rebuilt from the store asks the store for ids it has not seen itself.

The latest reply itself (its view and all) is read back from the store, which keeps it
with its move (``Reply``) until the seat's next one: kept here as well, every seat would
hold its view twice for the whole match, for the rare retry that reads it.
"""

from __future__ import annotations

import base64

from services._gen.rackem.v1 import table_pb2
from services.table.store import TableStore
from services.table.stored import Reply

__all__ = ["Replies"]


class Replies:
    def __init__(self, store: TableStore, table_id: str, adopted: bool) -> None:
        self._store = store
        self._table_id = table_id
        self._adopted = adopted  # rebuilt from the store: earlier ids may be only there
        self._versions: dict[tuple[int, str], int] = {}
        self._latest: dict[int, str] = {}  # each seat's latest move id

    @staticmethod
    def record(seat: int, move_id: str, reply: table_pb2.SubmitMoveReply) -> Reply:
        """What the store keeps of ``reply``, appended with its move."""
        body = base64.b64encode(reply.SerializeToString()).decode()
        return Reply(seat, move_id, reply.version, body)

    def remember(self, seat: int, move_id: str, reply: table_pb2.SubmitMoveReply) -> None:
        """``reply`` was stored with its move."""
        self._versions[seat, move_id] = reply.version
        self._latest[seat] = move_id

    async def earlier(
        self, seat: int, move_id: str
    ) -> tuple[int, table_pb2.SubmitMoveReply | None] | None:
        """The version ``seat``'s ``move_id`` made and, if it is still its latest, its reply."""
        version = self._versions.get((seat, move_id))
        if version is not None and self._latest[seat] != move_id:
            return version, None
        if version is None and not self._adopted:
            return None
        stored = await self._store.reply(self._table_id, seat, move_id)
        if stored is None:  # (a store that lost it: the view now, as for an older id)
            return None if version is None else (version, None)
        if stored.body is None:
            return stored.version, None
        return stored.version, table_pb2.SubmitMoveReply.FromString(base64.b64decode(stored.body))
