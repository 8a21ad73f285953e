"""Migrations (services/archive/schema.py): applied by ``migrate`` only, once, atomically;
a service opening the archive refuses a schema behind its own and accepts a newer one."""

from __future__ import annotations

import logging
import shutil
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from services.archive import ArchiveSettings, SchemaBehind, migrate, open_records, schema, status
from services.archive.settings import parse_database_url

MIGRATIONS = Path(schema.__file__).parent / "migrations"

HEAD = schema.head()  # this release's
NEXT = f"{int(HEAD) + 1:04d}"  # a later release's
SECOND = """
import sqlalchemy as sa
from alembic import op

revision = "{next}"
down_revision = "{head}"


def upgrade() -> None:
    op.create_table("later_things", sa.Column("thing_id", sa.Text(), primary_key=True))
    {fail}
"""


@pytest.fixture
def next_release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """This release's migrations plus a ``NEXT`` (a later release's); ``fail`` it by writing
    ``raise RuntimeError`` into it."""
    location = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS, location, ignore=shutil.ignore_patterns("__pycache__"))
    (location / "versions" / f"{NEXT}_later.py").write_text(_second(""))
    monkeypatch.setattr(schema, "LOCATION", str(location))
    schema._script.cache_clear()
    yield location
    schema._script.cache_clear()


def _second(fail: str) -> str:
    return SECOND.format(next=NEXT, head=HEAD, fail=fail)


def _tables(url: str) -> set[str]:
    parsed = parse_database_url(url)
    if parsed.backend == "sqlite":
        with sqlite3.connect(parsed.path) as db:
            rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    else:
        with psycopg.connect(parsed.conninfo) as connection:
            rows = connection.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
            ).fetchall()
    return {str(row[0]) for row in rows}


def test_migrate_brings_an_empty_database_to_the_head(empty_url: str) -> None:
    url = parse_database_url(empty_url)
    assert status(url).state == "behind" and status(url).current == ()
    before, after = migrate(url)
    assert (before.current, before.state) == ((), "behind")
    assert (after.current, after.state) == ((schema.head(),), "current")
    assert {"alembic_version", "match_records", "profiles"} <= _tables(empty_url)


def test_migrating_twice_changes_nothing(url: str) -> None:
    tables = _tables(url)
    before, after = migrate(parse_database_url(url))
    assert before == after and after.state == "current"
    assert _tables(url) == tables


def test_migrations_started_together_take_turns(empty_url: str) -> None:
    url = parse_database_url(empty_url)
    results: list[object] = []

    def run() -> None:
        try:
            results.append(migrate(url))
        except Exception as exc:  # collected, and the test fails on it below
            results.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert all(isinstance(result, tuple) for result in results), results
    befores = sorted(result[0].state for result in results if isinstance(result, tuple))
    assert befores == ["behind", "current", "current", "current"]  # one did the work
    assert status(url).state == "current"


async def test_a_service_refuses_a_database_without_the_schema(empty_url: str) -> None:
    with pytest.raises(SchemaBehind, match="rackem migrate"):
        await open_records(ArchiveSettings(database_url=empty_url))
    url = parse_database_url(empty_url)
    if url.backend == "sqlite":
        assert not Path(url.path).exists()  # opening never makes the file
    assert status(url).current == ()  # nor the schema


async def test_a_service_refuses_a_schema_behind_its_release(url: str, next_release: Path) -> None:
    """The database at this release's head, the next release's beyond: not served until
    migrated."""
    assert status(parse_database_url(url)).state == "behind"
    with pytest.raises(SchemaBehind, match=f"is at {HEAD}; this release needs {NEXT}"):
        await open_records(ArchiveSettings(database_url=url))
    before, after = migrate(parse_database_url(url))
    assert (before.current, after.current) == ((HEAD,), (NEXT,))
    assert "later_things" in _tables(url)
    store = await open_records(ArchiveSettings(database_url=url))
    await store.close()


async def test_a_release_serves_a_schema_a_newer_release_migrated(
    url: str, next_release: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A rolling upgrade: the new release's migration ran first; the old replicas still
    running (or restarting) serve on, and say so."""
    migrate(parse_database_url(url))  # to NEXT
    monkeypatch.setattr(schema, "LOCATION", str(MIGRATIONS))  # back to this release
    schema._script.cache_clear()
    assert status(parse_database_url(url)).state == "ahead"
    before, after = migrate(parse_database_url(url))  # leaves it as it is
    assert before.current == after.current == (NEXT,)
    with caplog.at_level(logging.WARNING, logger="rackem.archive"):
        store = await open_records(ArchiveSettings(database_url=url))
    await store.close()
    assert [r.message for r in caplog.records] == ["archive_schema_ahead"]


def test_a_failed_migration_leaves_the_schema_as_it_was(url: str, next_release: Path) -> None:
    second = next_release / "versions" / f"{NEXT}_later.py"
    second.write_text(_second('raise RuntimeError("a step that fails")'))
    tables = _tables(url)
    with pytest.raises(RuntimeError, match="a step that fails"):
        migrate(parse_database_url(url))
    assert _tables(url) == tables  # no later_things table: the whole migration rolled back
    assert status(parse_database_url(url)).current == (HEAD,)
