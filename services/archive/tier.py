"""Opening the archive named by ``DATABASE_URL``: its backend, connected, its schema checked.

``open_records`` (the record store) and ``open_profiles`` (the profile store, on the same
database) are what a service calls at start. It never migrates (``rackem migrate``
does, services/archive/schema.py): a schema behind this release's is ``SchemaBehind``,
and the service refuses to start with that message; a database that does not answer
within ``DATABASE_TIMEOUT_MS`` is ``StoreUnavailable``.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

import services.archive.schema as schema
from services.archive.profiles import ProfileStore
from services.archive.records import RecordStore
from services.archive.settings import ArchiveSettings, DatabaseUrl, parse_database_url
from services.common.logs import event

__all__ = ["open_profiles", "open_records"]

log = logging.getLogger("rackem.archive")


class _Opened(RecordStore, Protocol):
    async def schema_revisions(self) -> tuple[str, ...]: ...


class _OpenedProfiles(ProfileStore, Protocol):
    async def schema_revisions(self) -> tuple[str, ...]: ...


async def _connect(url: DatabaseUrl, settings: ArchiveSettings, profiles: bool) -> Any:
    if url.backend == "sqlite":
        from services.archive.profiles_sqlite import SqliteProfiles
        from services.archive.sqlite import SqliteRecords

        try:
            kind = SqliteProfiles if profiles else SqliteRecords
            return await kind.open(url.path, settings.database_timeout_ms)
        except FileNotFoundError:
            raise schema.SchemaBehind(
                f"no archive at {url.path}: run `rackem migrate` (docs/archive.md)"
            ) from None
    from services.archive.postgres import PostgresRecords
    from services.archive.profiles_postgres import PostgresProfiles

    return await (PostgresProfiles if profiles else PostgresRecords).open(
        url.conninfo,
        pool_min=settings.database_pool_min,
        pool_max=settings.database_pool_max,
        timeout_ms=settings.database_timeout_ms,
    )


async def open_records(settings: ArchiveSettings) -> RecordStore:
    """The record store at ``settings.database_url``, once its schema is this release's
    (or a newer one's)."""
    url = parse_database_url(settings.database_url)
    store: _Opened = await _connect(url, settings, profiles=False)
    await _check(url, store)
    return store


async def open_profiles(settings: ArchiveSettings) -> ProfileStore:
    """The profile store at ``settings.database_url`` (the archive's database, its own
    connections), once its schema is this release's (or a newer one's)."""
    url = parse_database_url(settings.database_url)
    store: _OpenedProfiles = await _connect(url, settings, profiles=True)
    await _check(url, store)
    return store


async def _check(url: DatabaseUrl, store: _Opened | _OpenedProfiles) -> None:
    try:
        found = schema.require_current(await store.schema_revisions(), url)
    except BaseException:
        await store.close()
        raise
    if found.state == "ahead":
        event(log, "archive_schema_ahead", logging.WARNING, current=found.current, head=found.head)
