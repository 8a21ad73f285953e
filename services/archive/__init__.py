"""The archive: what outlives a match, in a database (docs/archive.md).

SQLite (``sqlite:///PATH``, ``rackem up``) or PostgreSQL (``postgresql://…``, the
deployed shape), chosen by ``DATABASE_URL``; its interfaces, ``RecordStore`` and
``ProfileStore`` (docs/profiles.md), each held to one contract test on both
(tests/services/archive/). The schema is alembic's migrations,
applied by ``rackem migrate`` only.
"""

from __future__ import annotations

from services.archive.profiles import (
    DailyEntry,
    HistoryEntry,
    LeaderboardEntry,
    MatchResult,
    Profile,
    ProfileStore,
    Rating,
    SeatResult,
)
from services.archive.records import MatchRecord, RecordStore, retention_cutoff
from services.archive.schema import SchemaBehind, SchemaStatus, migrate, status
from services.archive.settings import ArchiveSettings, DatabaseUrl, parse_database_url
from services.archive.tier import open_profiles, open_records

__all__ = [
    "ArchiveSettings",
    "DailyEntry",
    "DatabaseUrl",
    "HistoryEntry",
    "LeaderboardEntry",
    "MatchRecord",
    "MatchResult",
    "Profile",
    "ProfileStore",
    "Rating",
    "RecordStore",
    "SchemaBehind",
    "SchemaStatus",
    "SeatResult",
    "migrate",
    "open_profiles",
    "open_records",
    "parse_database_url",
    "retention_cutoff",
    "status",
]
