"""The process-per-service stack with its archive on a PostgreSQL of its own (Debian's,
tests/postgres_engine.py), migrated, and Redis from the session's engines: what the system
tests of the archive, profiles and rated finishes start once a module."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
from postgres_engine import Postgres
from redis_engines import Engines

from services.archive import migrate, parse_database_url

from .stack import Stack


@dataclass(frozen=True)
class OnPostgres:
    stack: Stack
    server: Postgres
    url: str  # the archive's DATABASE_URL
    redis_url: str


@contextmanager
def stack_on_postgres(
    redis_engines: Engines,
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    settings: Mapping[str, str],
    tables: int,
) -> Iterator[OnPostgres]:
    """A started stack of ``tables`` replicas with ``settings`` and ``DATABASE_URL`` naming
    a new, migrated database ``name``; stopped, and its PostgreSQL with it, at the end."""
    server = Postgres()
    server.start()
    stack: Stack | None = None
    try:
        url = server.database(name)
        migrate(parse_database_url(url))
        engine = redis_engines.get("single")
        engine.flush()
        workdir = tmp_path_factory.mktemp(f"{name}-stack")
        stack = Stack(workdir, engine.url, {**settings, "DATABASE_URL": url})
        stack.build(tables=tables)
        stack.start()
        yield OnPostgres(stack, server, url, engine.url)
    finally:
        if stack is not None:
            stack.stop()
        server.stop()
