"""The container fixtures of tests/conftest.py: a real Redis, and a loud failure without one."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

ROOT = Path(__file__).resolve().parent.parent
Rule = Callable[..., dict[str, str]]


def test_redis_url_serves_ping_set_and_get(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        assert client.ping() is True
        key = f"test:{secrets.token_hex(8)}"
        assert client.set(key, "rack-o", ex=60) is True
        assert client.get(key) == "rack-o"
        assert str(client.info("server")["redis_version"]).startswith("7.")
    finally:
        client.close()


def test_redis_fixture_fails_rather_than_skips_without_an_engine(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    target = "tests/test_containers.py::test_redis_url_serves_ping_set_and_get"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", target],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "no container engine answers" in output
    assert "1 error" in output
    assert "skipped" not in output


@pytest.fixture
def unix_socket(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "podman.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    try:
        yield path
    finally:
        listener.close()


def test_podman_environment_points_clients_at_a_podman_socket(
    podman_environment_rule: Rule, unix_socket: Path
) -> None:
    env = podman_environment_rule({}, podman_socket=unix_socket, docker_socket=unix_socket / "none")
    assert env["DOCKER_HOST"] == f"unix://{unix_socket}"
    assert env["TESTCONTAINERS_RYUK_DISABLED"] == "true"
    assert env["TESTCONTAINERS_CONNECTION_MODE"] == "docker_host"
    assert env["DOCKER_BUILDKIT"] == "0"


def test_podman_environment_leaves_a_docker_engine_alone(
    podman_environment_rule: Rule, unix_socket: Path
) -> None:
    rule = podman_environment_rule
    assert rule({}, podman_socket=unix_socket, docker_socket=unix_socket) == {}
    assert rule({"DOCKER_HOST": "tcp://127.0.0.1:2375"}, podman_socket=unix_socket) == {}


def test_podman_environment_needs_the_socket(podman_environment_rule: Rule, tmp_path: Path) -> None:
    missing = tmp_path / "podman.sock"
    assert podman_environment_rule({}, podman_socket=missing, docker_socket=tmp_path / "no") == {}
