"""A real PostgreSQL for the tests: Debian's server (``postgresql``) on loopback, started
under its own user (``postgres``, when the tests run as root) in a directory of its own,
behind a password (scram-sha-256), as every PostgreSQL of the project runs.

``Postgres.start()`` runs ``initdb`` into a fresh directory, then ``pg_ctl start`` on a
free port. PostgreSQL cannot bind port 0 and say which port it got, so a port is picked
here (bind and release) and bound by the server later: another process may take it in
between. A server that exits because its port is taken (its log: "Address already in
use") is started again on another port, a few times (``TRIES``), as tests/redis_engines.py
does for Redis.

``database()`` makes a new, empty database and returns its URL, so each test has its own.
Used by the archive's tests (tests/conftest.py's ``postgres`` fixture).
"""

from __future__ import annotations

import os
import pwd
import re
import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path

import psycopg
from redis_engines import IN_USE, TRIES, PortTaken, free_port

__all__ = ["Postgres", "bindir"]

USER = "postgres"  # the superuser, and (as root) the system user that runs the server
START_TIMEOUT_S = 30


def bindir() -> Path:
    """Debian's newest installed PostgreSQL's programs (``/usr/lib/postgresql/N/bin``)."""
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda path: int(re.sub(r"\D", "", path.parent.parent.name) or 0),
    )
    if not found:
        raise RuntimeError("PostgreSQL is not installed (scripts/setup installs it with apt)")
    return found[-1].parent


class Postgres:
    """One PostgreSQL cluster on 127.0.0.1; ``stop()`` ends it and removes its files."""

    def __init__(self) -> None:
        self.password = secrets.token_hex(12)
        self.port = 0
        self.bin = bindir()
        # Not under pytest's tmp_path: that is root's alone (0700), and the server runs
        # as the postgres user, which must reach its directory.
        self.workdir = Path(tempfile.mkdtemp(prefix="rackem-postgres-"))
        self._as_root = os.geteuid() == 0
        self._started = False

    @property
    def data(self) -> Path:
        return self.workdir / "data"

    @property
    def log(self) -> Path:
        return self.workdir / "postgres.log"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}:{self.password}@127.0.0.1:{self.port}/{database}"

    def _run(self, *command: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        prefix = ["runuser", "-u", USER, "--"] if self._as_root else []
        return subprocess.run(
            [*prefix, *command],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            cwd=self.workdir,
        )

    def start(self) -> None:
        if self._as_root:
            entry = pwd.getpwnam(USER)
            os.chown(self.workdir, entry.pw_uid, entry.pw_gid)
        password_file = self.workdir / "password"
        password_file.write_text(self.password + "\n")
        if self._as_root:
            os.chown(password_file, entry.pw_uid, entry.pw_gid)
        done = self._run(
            str(self.bin / "initdb"),
            "--pgdata", str(self.data),
            "--username", USER,
            "--pwfile", str(password_file),
            "--auth-host", "scram-sha-256",
            "--auth-local", "scram-sha-256",
            "--encoding", "UTF8",
            "--locale", "C",
            "--no-sync",
        )  # fmt: skip
        password_file.unlink()
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed:\n{done.stdout}\n{done.stderr}")
        self.port = free_port()
        for tries_left in reversed(range(TRIES)):
            try:
                self._start()
                self._started = True
                return
            except PortTaken:
                if not tries_left:
                    raise
                self.port = free_port()

    def _start(self) -> None:
        since = self.log.stat().st_size if self.log.exists() else 0
        options = f"-p {self.port} -k {self.workdir} -c listen_addresses=127.0.0.1"
        done = self._run(
            str(self.bin / "pg_ctl"),
            "start",
            "--pgdata", str(self.data),
            "--log", str(self.log),
            "--wait",
            "--timeout", str(START_TIMEOUT_S),
            "-o", options,
            timeout=START_TIMEOUT_S + 30,
        )  # fmt: skip
        if done.returncode != 0:
            with self.log.open("rb") as raw:
                raw.seek(since)
                text = raw.read().decode(errors="replace")
            error = PortTaken if IN_USE in text else RuntimeError
            raise error(f"postgres on {self.port} did not start:\n{text[-2000:]}{done.stderr}")

    def admin(self) -> psycopg.Connection[tuple[object, ...]]:
        return psycopg.connect(self.url(), autocommit=True, connect_timeout=10)

    def database(self, prefix: str = "test") -> str:
        """A new empty database; its URL."""
        name = f"{prefix}_{secrets.token_hex(6)}"
        with self.admin() as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop_server(self) -> None:
        """Stop the server (``-m fast``: its connections are cut), keeping its files."""
        if self._started:
            self._run(str(self.bin / "pg_ctl"), "stop", "--pgdata", str(self.data), "-m", "fast")
            self._started = False

    def start_server(self) -> None:
        """Start a stopped server again, on its port."""
        self._start()
        self._started = True

    def stop(self) -> None:
        try:
            self.stop_server()
        finally:
            shutil.rmtree(self.workdir, ignore_errors=True)
