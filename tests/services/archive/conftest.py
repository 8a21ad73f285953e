"""Fixtures for the archive's tests: a fresh database on each backend, migrated or not.

``backend`` runs a test once on SQLite (a file under the test's tmp_path) and once on
PostgreSQL (a database of its own on the session's server, tests/postgres_engine.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from services.archive import ArchiveSettings, RecordStore, migrate, open_records
from services.archive.settings import parse_database_url

BACKENDS = ("sqlite", "postgresql")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def empty_url(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database with nothing in it yet (SQLite: no file yet)."""
    if backend == "sqlite":
        return f"sqlite:///{tmp_path}/archive.sqlite3"
    postgres = request.getfixturevalue("postgres")
    return str(postgres.database("archive"))


@pytest.fixture
def url(empty_url: str) -> str:
    """A database at this release's schema (``rackem migrate`` run on it)."""
    migrate(parse_database_url(empty_url))
    return empty_url


@pytest.fixture
async def records(url: str) -> AsyncIterator[RecordStore]:
    store = await open_records(ArchiveSettings(database_url=url))
    yield store
    await store.close()
