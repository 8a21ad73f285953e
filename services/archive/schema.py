"""The archive's schema version: ``migrate`` brings a database to this release's head, and
``require_current`` is what a service checks when it opens the archive.

Migrations are alembic's (``services/archive/migrations/``), applied by ``rackem migrate``
alone — a compose one-shot service, a Kubernetes Job — and never by a service at start,
where its replicas would race each other. ``migrate`` holds a lock while it runs
(PostgreSQL: a transaction-scoped advisory lock; SQLite: ``BEGIN IMMEDIATE``) and runs
every step in that one transaction, so two at once take turns and the second finds
nothing to do, and a step that fails leaves the schema as it was.

A service opening the archive reads the version (``alembic_version``) and compares it
with this release's head:

- the same: it serves;
- behind (no schema yet, or an older revision of ours): ``SchemaBehind``, and the
  service does not start (run ``rackem migrate``);
- ahead (a revision this release does not know: a newer release migrated first, as a
  rolling upgrade does): it serves. Every migration keeps the release before it working
  (docs/archive.md, *Migrations*).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from services.archive.settings import DatabaseUrl

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from sqlalchemy.engine import Connection, Engine

__all__ = ["SchemaBehind", "SchemaStatus", "head", "migrate", "require_current", "status"]

LOCATION = "services.archive:migrations"
_LOCK_KEY = 0x7261636B  # "rack": PostgreSQL's advisory lock that one migration holds at a time

State = Literal["current", "behind", "ahead"]


class SchemaBehind(RuntimeError):
    """The archive's schema is older than this release needs: run ``rackem migrate``."""


@dataclass(frozen=True, slots=True)
class SchemaStatus:
    current: tuple[str, ...]  # the database's revisions (empty: no schema at all)
    head: str  # this release's
    state: State

    def describe(self) -> str:
        at = ", ".join(self.current) or "no schema"
        return f"{self.state}: the database is at {at}, this release's head is {self.head}"


@functools.cache
def _script() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_config())


def _config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", LOCATION)
    config.set_main_option("path_separator", "os")
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head() -> str:
    """This release's schema revision."""
    found = _script().get_current_head()
    if found is None:  # pragma: no cover - the package ships its migrations
        raise RuntimeError("no migrations found")
    return found


def judge(current: tuple[str, ...]) -> SchemaStatus:
    """Where revisions ``current`` stand against this release's head."""
    want = head()
    known = {script.revision for script in _script().walk_revisions()}
    state: State
    if current == (want,):
        state = "current"
    elif current and not set(current) <= known:
        state = "ahead"
    else:
        state = "behind"
    return SchemaStatus(tuple(current), want, state)


def require_current(current: tuple[str, ...], where: DatabaseUrl) -> SchemaStatus:
    """``judge(current)``; ``SchemaBehind`` (with what to do) if the schema is behind."""
    found = judge(current)
    if found.state == "behind":
        at = ", ".join(found.current) or "no schema"
        raise SchemaBehind(
            f"the archive at {where.redacted()} is at {at}; this release needs {found.head}: "
            "run `rackem migrate` (docs/archive.md)"
        )
    return found


def _engine(url: DatabaseUrl) -> Engine:
    from sqlalchemy import create_engine, event
    from sqlalchemy.pool import NullPool

    engine = create_engine(url.sqlalchemy_url, poolclass=NullPool)
    if url.backend == "sqlite":
        # The standard library's sqlite3 begins transactions by itself, and not before
        # DDL; alembic's documented recipe: no implicit transactions, and BEGIN IMMEDIATE,
        # so a migration is one transaction that holds the write lock from its start.
        @event.listens_for(engine, "connect")
        def _no_implicit_begin(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None

        @event.listens_for(engine, "begin")
        def _begin_immediate(connection: Connection) -> None:
            connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _current(connection: Connection) -> tuple[str, ...]:
    from alembic.runtime.migration import MigrationContext

    return tuple(MigrationContext.configure(connection).get_current_heads())


def migrate(url: DatabaseUrl) -> tuple[SchemaStatus, SchemaStatus]:
    """Bring the database at ``url`` to this release's head (an SQLite file is made if
    missing); the status before and after. A database already there, or ahead, is left
    as it is."""
    from alembic import command

    if url.backend == "sqlite":
        Path(url.path).parent.mkdir(parents=True, exist_ok=True)
    engine = _engine(url)
    try:
        with engine.begin() as connection:
            if url.backend == "postgresql":
                connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_LOCK_KEY})")
            before = judge(_current(connection))
            if before.state == "behind":
                command.upgrade(_config(connection), "head")
            after = judge(_current(connection))
    finally:
        engine.dispose()
    return before, after


def status(url: DatabaseUrl) -> SchemaStatus:
    """Where the database at ``url`` stands (an SQLite file that is missing: no schema)."""
    if url.backend == "sqlite" and not Path(url.path).exists():
        return judge(())
    engine = _engine(url)
    try:
        with engine.connect() as connection:
            return judge(_current(connection))
    finally:
        engine.dispose()
