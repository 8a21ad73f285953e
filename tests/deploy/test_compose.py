"""compose.yaml: the whole system on one machine, healthy, serving a whole match to the host."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from published_ports import published_port

import rackcore
from rackem.client import Client, ServerError, play_match

if TYPE_CHECKING:
    from tests.conftest import Engine

ROOT = Path(__file__).resolve().parents[2]
RACKEM_SERVICES = {"bot", "table-1", "table-2", "matchmaker", "gateway"}
SERVICES = RACKEM_SERVICES | {"redis", "postgres"}  # each healthy while the stack runs
ONE_SHOT = {"migrate"}  # runs `rackem migrate`, exits 0, and the tables start after it
PASSWORDS = {
    "REDIS_PASSWORD": "pw-of-the-test",
    "POSTGRES_PASSWORD": "pg-pw-of-the-test",
    "DAILY_SECRET": "daily-secret-of-the-test",
}


def test_compose_file_describes_the_stack(compose: list[str]) -> None:
    rendered = subprocess.run(
        [*compose, "config", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "RACKEM_PORT": "8000", **PASSWORDS},
    )
    assert rendered.returncode == 0, rendered.stderr
    services: dict[str, Any] = json.loads(rendered.stdout)["services"]
    assert set(services) == SERVICES | ONE_SHOT
    assert {name for name, service in services.items() if "build" in service} == {"bot"}
    assert len({services[name]["image"] for name in RACKEM_SERVICES | ONE_SHOT}) == 1
    for name in SERVICES | ONE_SHOT:
        service = services[name]
        assert service["init"] is True
        if name in SERVICES:
            assert service["healthcheck"]["test"][0] == "CMD-SHELL"  # podman splits exec form
        for dependency, condition in service.get("depends_on", {}).items():
            want = "service_completed_successfully" if dependency in ONE_SHOT else "service_healthy"
            assert condition["condition"] == want
    for name in RACKEM_SERVICES:
        assert services[name]["command"][0] == "serve"
        assert services[name]["read_only"] is True
    for name in ("table-1", "table-2"):
        environment = services[name]["environment"]
        assert environment["ADVERTISE_ADDR"] == f"{name}:50052"
        assert environment["REPLICA_ID"] == name
        assert environment["DAILY_SECRET"] == "daily-secret-of-the-test"  # the same on both
        assert "table" in services[name]["networks"]["default"]["aliases"]
    assert set(services["gateway"]["depends_on"]) == {"matchmaker", "table-1", "table-2"}
    gateway_env = services["gateway"]["environment"]
    assert gateway_env["ALLOWED_HOSTS"] == "127.0.0.1,localhost,[::1]"
    assert "FORWARDED_ALLOW_IPS" not in gateway_env  # nothing in front of it to believe
    (published,) = services["gateway"]["ports"]
    assert (published["target"], published["published"]) == (8000, "8000")
    assert not any("ports" in services[name] for name in SERVICES - {"gateway"})
    # Durable by default: AOF fsynced every second on a volume, behind the password.
    redis = services["redis"]
    command = " ".join(redis["command"])
    assert "--appendonly yes --appendfsync everysec" in command
    assert '--requirepass "$$REDIS_PASSWORD"' in command  # escaped: the shell's
    assert redis["environment"]["REDIS_PASSWORD"] == "pw-of-the-test"
    assert [v["target"] for v in redis["volumes"]] == ["/data"]
    for name in ("table-1", "table-2", "matchmaker"):
        url = services[name]["environment"]["REDIS_URL"]
        assert url == "redis://:pw-of-the-test@redis:6379/0"
    # The archive: PostgreSQL on a volume behind its password; `rackem migrate` once, before
    # the tables (the only service that reads and writes it); never by a service itself.
    postgres = services["postgres"]
    assert postgres["environment"]["POSTGRES_PASSWORD"] == "pg-pw-of-the-test"
    assert [v["target"] for v in postgres["volumes"]] == ["/var/lib/postgresql/data"]
    migrate = services["migrate"]
    assert migrate["command"][0] == "migrate" and migrate["read_only"] is True
    assert migrate["depends_on"]["postgres"]["condition"] == "service_healthy"
    database_url = "postgresql://rackem:pg-pw-of-the-test@postgres:5432/rackem"
    assert migrate["environment"]["DATABASE_URL"] == database_url
    for name in ("table-1", "table-2"):
        assert services[name]["environment"]["DATABASE_URL"] == database_url
        assert "migrate" in services[name]["depends_on"]
    users = {name for name, s in services.items() if "DATABASE_URL" in s.get("environment", {})}
    # The gateway reads and writes profiles there (after the tables: after the migration).
    assert services["gateway"]["environment"]["DATABASE_URL"] == database_url
    assert users == {"table-1", "table-2", "migrate", "gateway"}


@pytest.mark.parametrize("missing", sorted(PASSWORDS))
def test_compose_refuses_to_run_without_a_password(compose: list[str], missing: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in PASSWORDS}
    env.update({name: value for name, value in PASSWORDS.items() if name != missing})
    rendered = subprocess.run(
        [*compose, "--env-file", os.devnull, "config", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert rendered.returncode != 0
    assert missing in rendered.stderr


@dataclass(frozen=True)
class Stack:
    command: list[str]
    env: dict[str, str]
    port: int

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.command, *args], capture_output=True, text=True, timeout=timeout, env=self.env
        )

    def logs(self) -> str:
        return self.run("logs", "--no-color", "--tail", "40").stdout


@pytest.fixture
def stack(container_engine: Engine, compose: list[str]) -> Iterator[Stack]:
    """A compose project of its own (name, host port); taken down afterwards."""
    project = f"rackem-test-{secrets.token_hex(3)}"
    env = {**container_engine.base_images(), **os.environ}
    stack = Stack([*compose, "--project-name", project], env, published_port())
    stack.env["RACKEM_PORT"] = str(stack.port)
    stack.env["REDIS_PASSWORD"] = secrets.token_hex(16)
    stack.env["POSTGRES_PASSWORD"] = secrets.token_hex(16)
    stack.env["DAILY_SECRET"] = secrets.token_hex(32)
    healthchecks = None
    if container_engine.podman:  # podman runs no healthchecks by itself
        healthchecks = subprocess.Popen(
            [str(ROOT / "scripts" / "containers" / "run-healthchecks"), project],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        yield stack
    finally:
        stack.run("down", "--volumes", "--timeout", "10", timeout=300)
        if healthchecks is not None:
            os.killpg(healthchecks.pid, signal.SIGTERM)
            healthchecks.wait(timeout=30)


@pytest.mark.containers
@pytest.mark.timeout(900)
def test_compose_stack_comes_up_healthy_and_serves_the_host(stack: Stack) -> None:
    up = stack.run("up", "--build", "--wait", "--wait-timeout", "240", timeout=800)
    assert up.returncode == 0, f"{up.stderr[-3000:]}\n{stack.logs()}"

    listed = stack.run("ps", "--all", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    containers = [json.loads(line) for line in listed.stdout.splitlines() if line.strip()]
    health = {c["Service"]: c["Health"] for c in containers if c["Service"] in SERVICES}
    assert health == dict.fromkeys(SERVICES, "healthy"), stack.logs()
    (migrated,) = [c for c in containers if c["Service"] in ONE_SHOT]
    assert (migrated["State"], migrated["ExitCode"]) == ("exited", 0), stack.logs()
    # It ran `rackem migrate`: the archive's schema is this release's, and again is a no-op.
    again = stack.run("run", "--rm", "--no-deps", "migrate", "migrate", "--check")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout.strip().splitlines()[-1])["state"] == "current"

    response = httpx.get(f"http://127.0.0.1:{stack.port}/healthz", timeout=10)
    assert response.status_code == 200

    # The stack serves a whole match to two protocol clients meeting by room code, across
    # two table replicas on Redis, and its record verifies.
    finals, table_id = asyncio.run(_play_private_match(f"ws://127.0.0.1:{stack.port}/ws"))
    views = [final["view"] for final in finals]
    assert [final["status"] for final in finals] == ["finished", "finished"]
    assert views[0]["scores"] == views[1]["scores"]
    assert views[0]["winner"] == views[1]["winner"] is not None
    log = httpx.get(f"http://127.0.0.1:{stack.port}/match/{table_id}.json", timeout=10).json()
    verdict = rackcore.verify(log)
    assert verdict["valid"], verdict
    assert verdict["scores"] == views[0]["scores"]


async def _until_served(call: Callable[[], Awaitable[Any]], within_s: float = 60) -> None:
    """``call`` again while it is answered ``unavailable`` ("try again", as the protocol
    says). Under podman a service's first look-ups of its peers can be lost while
    aardvark-dns reloads for a container starting or stopping (docs/containers.md)."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            await call()
            return
        except ServerError as exc:
            if exc.code != "unavailable" or time.monotonic() > deadline:
                raise
        await asyncio.sleep(1)


async def _play_private_match(url: str) -> tuple[list[dict[str, Any]], str]:
    async with Client(url) as host, Client(url) as guest:
        rules = {"players": 2, "target": 100}
        await _until_served(lambda: host.create_table("Host", rules=rules))
        assert host.code is not None and host.table_id is not None
        code = host.code
        await _until_served(lambda: guest.join(code, "Guest"))
        # Paced under the gateway's default limit of 20 messages a second per connection.
        finals = await asyncio.gather(
            play_match(host, timeout=300, min_interval=0.06),
            play_match(guest, timeout=300, min_interval=0.06),
        )
        return list(finals), host.table_id
