"""``rackem migrate``: applies the archive's migrations to DATABASE_URL, idempotently;
``--check`` says where the schema stands (exit 1 while behind)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from postgres_engine import Postgres
from redis_engines import free_port

from rackem.cli import main
from services.archive import schema

ROOT = Path(__file__).resolve().parents[2]


def _migrate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["migrate", *args])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else {}


def test_migrate_makes_the_schema_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path}/a/archive.sqlite3"
    assert _migrate(capsys, "--check", "--database-url", url) == (
        1,
        {"database": url, "before": [], "after": [], "head": schema.head(), "state": "behind"},
    )
    code, first = _migrate(capsys, "--database-url", url)
    assert code == 0 and (first["before"], first["after"]) == ([], [schema.head()])
    code, again = _migrate(capsys, "--database-url", url)
    assert code == 0 and again["before"] == again["after"] == [schema.head()]
    assert _migrate(capsys, "--check", "--database-url", url)[1]["state"] == "current"


def test_migrate_reads_database_url(postgres: Postgres) -> None:
    url = postgres.database("cli")
    done = subprocess.run(
        [sys.executable, "-m", "rackem.cli", "migrate"],
        env={"DATABASE_URL": url, "PATH": "/usr/bin:/bin"},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["after"] == [schema.head()] and out["state"] == "current"
    assert postgres.password not in done.stdout  # the URL is shown without it
    assert out["database"] == url.replace(postgres.password, "***")


def test_migrate_without_a_database_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["migrate", "--database-url", ""]) == 2
    assert "DATABASE_URL" in capsys.readouterr().err
    assert main(["migrate", "--database-url", "sqlite:///:memory:"]) == 2
    assert "is a file" in capsys.readouterr().err


def test_migrate_on_a_database_that_does_not_answer_fails_without_its_password(
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = f"postgresql://rackem:s3cret@127.0.0.1:{free_port()}/rackem?connect_timeout=2"
    assert main(["migrate", "--database-url", url]) == 2
    err = capsys.readouterr().err
    assert "does not answer" in err and "s3cret" not in err
