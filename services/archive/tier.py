"""Opening the archive named by ``DATABASE_URL``: its backend, connected, its schema checked.

``open_records`` is what a service calls at start. It never migrates (``rackem migrate``
does, services/archive/schema.py): a schema behind this release's is ``SchemaBehind``,
and the service refuses to start with that message; a database that does not answer
within ``DATABASE_TIMEOUT_MS`` is ``StoreUnavailable``.
"""

from __future__ import annotations

import logging
from typing import Protocol

import services.archive.schema as schema
from services.archive.records import RecordStore
from services.archive.settings import ArchiveSettings, DatabaseUrl, parse_database_url
from services.common.logs import event

__all__ = ["open_records"]

log = logging.getLogger("rackem.archive")


class _Opened(RecordStore, Protocol):
    async def schema_revisions(self) -> tuple[str, ...]: ...


async def _connect(url: DatabaseUrl, settings: ArchiveSettings) -> _Opened:
    if url.backend == "sqlite":
        from services.archive.sqlite import SqliteRecords

        try:
            return await SqliteRecords.open(url.path, settings.database_timeout_ms)
        except FileNotFoundError:
            raise schema.SchemaBehind(
                f"no archive at {url.path}: run `rackem migrate` (docs/archive.md)"
            ) from None
    from services.archive.postgres import PostgresRecords

    return await PostgresRecords.open(
        url.conninfo,
        pool_min=settings.database_pool_min,
        pool_max=settings.database_pool_max,
        timeout_ms=settings.database_timeout_ms,
    )


async def open_records(settings: ArchiveSettings) -> RecordStore:
    """The record store at ``settings.database_url``, once its schema is this release's
    (or a newer one's)."""
    url = parse_database_url(settings.database_url)
    store = await _connect(url, settings)
    try:
        found = schema.require_current(await store.schema_revisions(), url)
    except BaseException:
        await store.close()
        raise
    if found.state == "ahead":
        event(log, "archive_schema_ahead", logging.WARNING, current=found.current, head=found.head)
    return store
