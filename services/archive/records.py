"""The archive's record store: one interface, two backends (``sqlite.py``, ``postgres.py``).

A match record is what a finished table leaves behind: the ``rackem-match/1`` log with
its seed revealed (what ``GetRecord``, ``/match/{id}.json`` and the replay viewer
serve), the table's id and room code, why it ended, and when. It is written once, when
the table finishes, and never changed: ``put_record`` is idempotent by table id — the
first write wins, a second one (a replica finishing the same table again after a
failover, a retry whose answer was lost) keeps the first and says so. Records are kept
for good, or until ``purge`` removes those finished before a cut-off (the retention,
``RECORD_RETENTION_MS``).

A backend that cannot serve for now (the database unreachable, restarting, a pool with
no connection free in time) raises ``StoreUnavailable`` (services/common/errors.py),
which callers answer ``unavailable``; any other error is a bug.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = ["MatchRecord", "RecordStore", "retention_cutoff"]


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """One finished match, as the archive keeps it."""

    table_id: str
    code: str  # the room code ("" for a table made without one)
    reason: str  # the table's ended reason: "finished" or "abandoned"
    finished_at_ms: int  # wall clock, unix ms
    log_json: str  # the rackem-match/1 object, seed revealed, as JSON text


class RecordStore(Protocol):
    async def put_record(self, record: MatchRecord) -> bool:
        """Store ``record`` once: True if this call stored it; False if a record with its
        table id was already there, which is kept as it was (the first write wins, also
        between callers racing on several connections or processes)."""
        ...

    async def get_record(self, table_id: str) -> MatchRecord | None:
        """The record of ``table_id``, or None (never stored, or purged)."""
        ...

    async def purge(self, finished_before_ms: int) -> int:
        """Delete every record whose match finished before ``finished_before_ms``; how many."""
        ...

    async def ping(self) -> None:
        """Return once the database answers; ``StoreUnavailable`` if it does not."""
        ...

    async def close(self) -> None:
        """Close the connections (once; nothing may be called after)."""
        ...


def retention_cutoff(retention_ms: int, now_ms: int) -> int | None:
    """What ``purge`` is given for a retention of ``retention_ms`` at ``now_ms``; None for
    a retention of 0 (records are kept for good: nothing to purge)."""
    if retention_ms < 0:
        raise ValueError("a retention is 0 (for good) or a positive number of ms")
    return None if retention_ms == 0 else now_ms - retention_ms
