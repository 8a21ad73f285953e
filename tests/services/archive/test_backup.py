"""Backups (docs/archive.md): scripts/archive-backup dumps the archive with pg_dump,
scripts/archive-restore loads it into an empty database, which then serves its records
through the archive's interface, schema version and all."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from postgres_engine import Postgres, bindir

from services.archive import ArchiveSettings, MatchRecord, migrate, open_records, schema, status
from services.archive.settings import parse_database_url

ROOT = Path(__file__).resolve().parents[3]


def _script(name: str, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": f"{bindir()}:/usr/bin:/bin",  # the server's own pg_dump and pg_restore
        "DATABASE_URL": url,
        "HOME": os.environ.get("HOME", "/root"),
    }
    return subprocess.run(
        [str(ROOT / "scripts" / name), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


async def test_a_backup_restored_into_an_empty_database_serves_its_records(
    postgres: Postgres, tmp_path: Path
) -> None:
    source = postgres.database("live")
    migrate(parse_database_url(source))
    store = await open_records(ArchiveSettings(database_url=source))
    records = [
        MatchRecord(f"t{i:016x}", "ABCD", "finished", 1_700_000_000_000 + i, f'{{"n":{i}}}')
        for i in range(20)
    ]
    try:
        for record in records:
            await store.put_record(record)
    finally:
        await store.close()

    backup = tmp_path / "archive.dump"
    done = _script("archive-backup", source, str(backup))
    assert done.returncode == 0, done.stderr
    assert backup.stat().st_size > 0 and not (tmp_path / "archive.dump.partial").exists()
    assert postgres.password not in done.stderr  # the URL is shown without it

    target = postgres.database("restored")
    done = _script("archive-restore", target, str(backup))
    assert done.returncode == 0, done.stderr
    assert status(parse_database_url(target)).current == (schema.head(),)
    restored = await open_records(ArchiveSettings(database_url=target))
    try:
        assert [await restored.get_record(r.table_id) for r in records] == records
        assert await restored.put_record(records[0]) is False  # the key came back too
    finally:
        await restored.close()

    # Only into an empty database: the restored one is not.
    again = _script("archive-restore", target, str(backup))
    assert again.returncode == 1 and "not empty" in again.stderr


def test_backup_refuses_what_is_not_postgresql(tmp_path: Path) -> None:
    done = _script("archive-backup", f"sqlite:///{tmp_path}/a.sqlite3", str(tmp_path / "x"))
    assert done.returncode == 2 and ".backup" in done.stderr


def test_the_password_stays_off_the_command_line(postgres: Postgres, tmp_path: Path) -> None:
    """pg_dump gets the URL without the password, and the password in PGPASSWORD."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "pg_dump").write_text('#!/bin/sh\necho "$@" >"$ARGS"; echo "$PGPASSWORD" >>"$ARGS"\n')
    (fake / "pg_dump").chmod(0o755)
    args = tmp_path / "args"
    env = {"PATH": f"{fake}:/usr/bin:/bin", "ARGS": str(args)}
    env["DATABASE_URL"] = "postgresql://rackem:p%40ss@db.example:5432/rackem?sslmode=require"
    subprocess.run(
        [str(ROOT / "scripts" / "archive-backup"), str(tmp_path / "out")],
        env=env,
        capture_output=True,
        timeout=60,
    )
    line, password = args.read_text().splitlines()
    assert "--dbname=postgresql://rackem@db.example:5432/rackem?sslmode=require" in line
    assert "p%40ss" not in line and password == "p@ss"
