"""Exactly-once answers for one table: the version each accepted move id made.

A move's answer is the table's version after it (``moved``), so a retried move id (the
case of a lost answer) gets that version again and no move is made twice. The seat's
views come by its subscription either way, so the store keeps no view with the answer.
A table rebuilt from the store asks the store for ids it has not seen itself.
"""

from __future__ import annotations

from services.table.store import TableStore
from services.table.stored import Reply

__all__ = ["Replies"]


class Replies:
    def __init__(self, store: TableStore, table_id: str, adopted: bool) -> None:
        self._store = store
        self._table_id = table_id
        self._adopted = adopted  # rebuilt from the store: earlier ids may be only there
        self._versions: dict[tuple[int, str], int] = {}

    @staticmethod
    def record(seat: int, move_id: str, version: int) -> Reply:
        """What the store keeps of a move's answer, appended with its move."""
        return Reply(seat, move_id, version)

    def remember(self, seat: int, move_id: str, version: int) -> None:
        """``seat``'s ``move_id`` was stored with its ``version``."""
        self._versions[seat, move_id] = version

    async def earlier(self, seat: int, move_id: str) -> int | None:
        """The version ``seat``'s ``move_id`` made, if it was accepted before."""
        version = self._versions.get((seat, move_id))
        if version is not None or not self._adopted:
            return version
        return await self._store.reply(self._table_id, seat, move_id)
