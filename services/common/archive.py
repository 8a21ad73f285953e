"""Records that no longer change, out of process memory: an SQLite database (standard library).

The in-process stores (``rackem up`` without Redis) keep what is live in dicts and move
what is done here: a finished table's log and state (services/table/store/memory.py),
a started or closed table's matchmaker record and its seat tokens
(services/matchmaker/store/memory.py). So the process's memory does not grow with
the number of matches played, and, in a file under a data directory (``rackem up
--data DIR``), the records outlive the process. Without a path the database is
SQLite's in-memory one (tests, ``rackem serve`` without ``DATA_DIR``).

Each row is a value under ``(kind, key)`` with an expiry in wall-clock milliseconds (a
restart must not extend it); an expired row reads as absent and is deleted. Calls are
synchronous and short (one indexed row, WAL, no fsync per commit), so a store method
that uses them stays one step under asyncio, as the Redis scripts it mirrors are.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = ["Archive", "data_file"]

_PURGE_EVERY_MS = 60_000
_CACHE_KB = 256

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    expires INTEGER,
    PRIMARY KEY (kind, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS records_expiry ON records (expires);
"""


def _wall_ms() -> int:
    return int(time.time() * 1000)


def data_file(data_dir: str, name: str) -> str:
    """``DATA_DIR/name.sqlite3`` (the directory made if missing); ``:memory:`` if no dir."""
    if not data_dir:
        return ":memory:"
    folder = Path(data_dir).expanduser()
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder / f"{name}.sqlite3")


class Archive:
    def __init__(self, path: str = ":memory:", clock: Callable[[], int] = _wall_ms) -> None:
        self.path = path
        self._clock = clock
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        if path != ":memory:":
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
        # Records are written once and read now and then: a small page cache (SQLite's
        # default is 2 MB per database) keeps the process's memory flat as the file grows.
        self._db.execute(f"PRAGMA cache_size=-{_CACHE_KB}")
        self._db.executescript(_SCHEMA)
        self._purged = self._clock()

    def put(self, kind: str, key: str, value: str, expires_ms: int | None) -> None:
        self.put_many([(kind, key, value, expires_ms)])

    def put_many(self, rows: Iterable[tuple[str, str, str, int | None]]) -> None:
        """Write (or overwrite) each ``(kind, key, value, expires_ms)`` in one transaction."""
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?)", rows)
        now = self._clock()
        if now - self._purged >= _PURGE_EVERY_MS:
            self.purge(now)

    def get(self, kind: str, key: str) -> tuple[str, int | None] | None:
        """The value and its expiry, or None (never stored, deleted, or expired)."""
        row = self._db.execute(
            "SELECT value, expires FROM records WHERE kind = ? AND key = ?", (kind, key)
        ).fetchone()
        if row is None:
            return None
        value, expires = row
        if expires is not None and expires <= self._clock():
            self.delete(kind, key)
            return None
        return str(value), expires

    def delete(self, kind: str, key: str) -> None:
        self._db.execute("DELETE FROM records WHERE kind = ? AND key = ?", (kind, key))

    def purge(self, now_ms: int | None = None) -> int:
        """Delete every expired row; how many there were."""
        now = self._clock() if now_ms is None else now_ms
        self._purged = now
        return self._db.execute("DELETE FROM records WHERE expires <= ?", (now,)).rowcount

    def count(self, kind: str) -> int:
        row = self._db.execute("SELECT count(*) FROM records WHERE kind = ?", (kind,)).fetchone()
        return int(row[0])

    def close(self) -> None:
        self._db.close()
