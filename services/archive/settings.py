"""Where the archive is, read once: ``DATABASE_URL`` and its pool, timeout and retention.

``DATABASE_URL`` names the backend:

- ``sqlite:///relative/path.sqlite3``, ``sqlite:////absolute/path.sqlite3`` (SQLAlchemy's
  spelling: three slashes, then the path): a file, for ``rackem up`` and one process;
- ``postgresql://USER:PASSWORD@HOST:PORT/DATABASE[?sslmode=require…]`` (``postgres://``
  too; libpq's URL, its parameters passed on as they are): the deployed shape.

An in-memory SQLite database is refused: ``rackem migrate`` and the services must see
the same database.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from services.common.settings import SettingsError

__all__ = ["ArchiveSettings", "DatabaseUrl", "parse_database_url"]

Backend = Literal["sqlite", "postgresql"]


@dataclass(frozen=True, slots=True)
class ArchiveSettings:
    """``from_env(ArchiveSettings)``: the archive's variables, for every process that uses it."""

    database_url: str = ""  # unset: no archive (rackem up names its own, under --data)
    database_pool_min: int = 1  # PostgreSQL: connections kept open
    database_pool_max: int = 4  # PostgreSQL: connections at most
    # How long opening, or one call, may wait for the database before it is `unavailable`.
    database_timeout_ms: int = 5_000
    # A record is kept this long after its match finished; 0: for good.
    record_retention_ms: int = 0


@dataclass(frozen=True, slots=True)
class DatabaseUrl:
    """A parsed ``DATABASE_URL``: which backend, and how each client reaches it."""

    backend: Backend
    url: str  # as given
    path: str = ""  # sqlite: the file

    @property
    def conninfo(self) -> str:
        """What psycopg connects with: libpq's URL (``postgresql://…``)."""
        if self.backend != "postgresql":
            raise ValueError("conninfo is PostgreSQL's")
        parts = urlsplit(self.url)
        return urlunsplit(parts._replace(scheme="postgresql"))

    @property
    def sqlalchemy_url(self) -> str:
        """What alembic's engine connects with (migrations only): psycopg 3's dialect for
        PostgreSQL (SQLAlchemy's default would be psycopg2), the standard library for SQLite."""
        if self.backend == "sqlite":
            return f"sqlite:///{self.path}"
        return urlunsplit(urlsplit(self.url)._replace(scheme="postgresql+psycopg"))

    def redacted(self) -> str:
        """The URL without its password, for logs and messages."""
        parts = urlsplit(self.url)
        if parts.password is None:
            return self.url
        user = parts.username or ""
        host = parts.netloc.rsplit("@", 1)[1]
        return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


_POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")


def parse_database_url(url: str) -> DatabaseUrl:
    """``DATABASE_URL`` parsed; ``SettingsError`` with what is wrong with it."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise SettingsError("DATABASE_URL is not a URL (sqlite:///PATH or postgresql://…)")
    if scheme == "sqlite":
        if not rest.startswith("/") or rest in ("/", "/:memory:"):
            raise SettingsError(
                "DATABASE_URL: an SQLite archive is a file, sqlite:///PATH "
                "(an in-memory database is seen by one connection only)"
            )
        path = os.path.expanduser(rest[1:].split("?", 1)[0])
        return DatabaseUrl("sqlite", url, path=path)
    if scheme in _POSTGRES_SCHEMES:
        return DatabaseUrl("postgresql", url)  # libpq reads the rest (its own defaults too)
    raise SettingsError(f"DATABASE_URL: unknown scheme {scheme!r} (sqlite or postgresql)")
