"""``rackem up`` as a user runs it: a subprocess on a free port, played through, then stopped."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import closing, contextmanager
from pathlib import Path

import httpx
import pytest
import redis

from rackcore import verify
from rackem.client import Client, ConnectionLost, choose_move, play_match

FAST_ENV = {"BOT_DELAY_MS": "0", "LOG_LEVEL": "WARNING", "MSG_RATE": "200", "MSG_BURST": "400"}


@contextmanager
def rackem_up(
    *args: str, env: Mapping[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``rackem up --port 0 --no-browser ARGS`` (with ``env`` too); the process and the
    URL it printed."""
    with tempfile.TemporaryFile("w+") as errors:
        proc = subprocess.Popen(
            [sys.executable, "-m", "rackem.cli", "up", "--port", "0", "--no-browser", *args],
            env={**os.environ, **FAST_ENV, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            found = re.search(r"open (http://\S+)", line)
            if found is None:
                errors.seek(0)
                pytest.fail(f"rackem up did not start: {line!r} {errors.read()[-2000:]}")
            yield proc, found.group(1)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            assert proc.stdout is not None
            proc.stdout.close()


async def test_rackem_up_serves_a_whole_match_and_stops_cleanly_on_sigterm() -> None:
    with rackem_up() as (proc, url):
        async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
            assert (await http.get(f"{url}/healthz")).status_code == 200
            assert (await http.get(f"{url}/readyz")).status_code == 200
        async with Client(url) as client:
            seated = await client.create_table(
                "Ann", {"players": 2, "target": 50}, level="easy", start_now=True
            )
            final = await play_match(client, timeout=60)
            assert final["status"] == "finished"
            async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
                log = (await http.get(f"{url}/match/{seated['table_id']}.json")).json()
                # Reviewed by the bot service in process (its worker), as rackem up wires it.
                review = await http.get(f"{url}/review/{seated['table_id']}.json?seat=0")
            assert verify(log)["valid"]
            assert review.status_code == 200 and review.json()["seat"] == 0
            proc.send_signal(signal.SIGTERM)
            with pytest.raises(ConnectionLost) as lost:
                await client.wait_for("never", timeout=10)
            assert lost.value.code == 1001  # go elsewhere: the gateway is going away
        assert proc.wait(timeout=10) == 0
        assert proc.stdout is not None
        assert proc.stdout.read().splitlines() == ["rackem: stopping", "rackem: stopped"]


async def test_rackem_up_stops_on_ctrl_c_in_the_middle_of_a_match() -> None:
    with rackem_up() as (proc, url):
        async with Client(url) as client:
            await client.create_table("Ann", {"players": 4}, level="easy", start_now=True)
            await client.wait_for("view")
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=10) == 0


async def test_a_match_record_is_served_after_rackem_up_restarts_on_its_data_dir(
    tmp_path: Path,
) -> None:
    data = str(tmp_path / "data")
    with rackem_up("--data", data) as (proc, url):
        async with Client(url) as client:
            seated = await client.create_table(
                "Ann", {"players": 2, "target": 50}, level="easy", start_now=True
            )
            assert (await play_match(client, timeout=60))["status"] == "finished"
        async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
            before = (await http.get(f"{url}/match/{seated['table_id']}.json")).json()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    assert (Path(data) / "tables.sqlite3").is_file()
    with rackem_up("--data", data) as (proc, url):
        async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
            after = await http.get(f"{url}/match/{seated['table_id']}.json")
        assert after.status_code == 200 and after.json() == before
        assert verify(after.json())["valid"]
        async with Client(url) as client:  # the seat's token still finds its finished table
            resumed = await client.resume(seated["token"])
            assert resumed["table_id"] == seated["table_id"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0


def test_rackem_up_reports_a_port_in_use() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = str(taken.getsockname()[1])
        done = subprocess.run(
            [sys.executable, "-m", "rackem.cli", "up", "--port", port, "--no-browser"],
            env={**os.environ, **FAST_ENV},
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert "rackem up: cannot start" in done.stderr
    assert done.stdout == ""


async def test_rackem_up_can_keep_its_state_in_redis(redis_url: str) -> None:
    own_db = redis_url.rsplit("/", 1)[0] + "/7"  # this test's own database of the shared Redis
    with rackem_up("--redis", own_db) as (proc, url):
        async with Client(url) as client:
            seated = await client.create_table("Ann", {"players": 2}, level="easy", start_now=True)
            seen = 0
            while True:  # a few moves, the bot's and ours
                view = await client.next_view(seen)
                seen = client.views_seen
                if view["version"] >= 4:
                    break
                if view["legal"]:
                    await client.move(choose_move(view), version=view["version"])
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    with redis.Redis.from_url(own_db, decode_responses=True) as db:
        logged = db.llen(f"rackem:{{t:{seated['table_id']}}}:log")
        db.flushdb()
    assert logged >= view["version"]


async def test_rackem_up_on_redis_archives_finished_records_under_its_data_dir(
    redis_url: str, tmp_path: Path
) -> None:
    own_db = redis_url.rsplit("/", 1)[0] + "/8"  # this test's own database of the shared Redis
    env = {"ARCHIVE_SWEEP_MS": "200"}
    with rackem_up("--redis", own_db, "--data", str(tmp_path), env=env) as (proc, url):
        async with Client(url) as client:
            seated = await client.create_table(
                "Ann", {"players": 2, "target": 50}, level="easy", start_now=True
            )
            await play_match(client, timeout=60)
        table_id = seated["table_id"]
        with redis.Redis.from_url(own_db) as db:
            deadline = time.monotonic() + 60
            while db.exists(f"rackem:{{t:{table_id}}}:meta"):  # archived, then dropped
                assert time.monotonic() < deadline, "the finished table's keys stayed"
                await asyncio.sleep(0.1)
            db.flushdb()
        async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
            log = (await http.get(f"{url}/match/{table_id}.json")).json()  # from the archive
        assert verify(log)["valid"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    with closing(sqlite3.connect(tmp_path / "archive.sqlite3")) as archive:
        rows = archive.execute("SELECT table_id FROM match_records").fetchall()
    assert rows == [(table_id,)]


async def test_rackem_up_answers_its_own_host_names_only_and_keeps_metrics_private() -> None:
    with rackem_up() as (proc, url):
        port = url.rsplit(":", 1)[1]
        async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
            assert (await http.get(f"{url}/")).status_code == 200
            local = await http.get(
                f"http://127.0.0.1:{port}/", headers={"Host": f"localhost:{port}"}
            )
            assert local.status_code == 200
            rebound = await http.get(f"{url}/", headers={"Host": f"evil.example:{port}"})
            assert rebound.status_code == 400
            assert (await http.get(f"{url}/metrics")).status_code == 404
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0


async def test_rackem_up_serves_metrics_on_the_metrics_port_it_is_given() -> None:
    """METRICS_PORT is the gateway's: the table in the same process serves none of its own
    there (two servers on one port: rackem up would not start)."""
    with socket.socket() as held:  # a free port, held until rackem up is about to bind it
        held.bind(("127.0.0.1", 0))
        metrics_port = held.getsockname()[1]
    with rackem_up(env={"METRICS_PORT": str(metrics_port)}) as (proc, url):
        async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
            scraped = await http.get(f"http://127.0.0.1:{metrics_port}/metrics")
            assert scraped.status_code == 200
            assert "rackem_gateway_connections" in scraped.text
            assert (await http.get(f"{url}/metrics")).status_code == 404
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
