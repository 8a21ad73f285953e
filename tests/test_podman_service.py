"""scripts/containers/podman-service keeps a podman API service that starts containers, and
replaces one that answers its socket but cannot (its working directory deleted, as when
it was started from a fresh clone since removed). Each test runs its own service on a
scratch socket; the machine's shared service is never touched."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "containers" / "podman-service"
PROBE = ["run", "--rm", "--pull=never", "--network=none", "localhost/redis:7", "sh", "-c", "exit 0"]

pytestmark = pytest.mark.containers


@pytest.fixture
def scratch() -> Iterator[Path]:
    """A short directory for a socket (a unix socket's path has at most 107 bytes); every
    service started on it is stopped afterwards, by its pid."""
    path = Path(tempfile.mkdtemp(prefix="podsvc-", dir="/tmp"))
    try:
        yield path
    finally:
        for pid in listeners(path / "podman.sock"):
            os.kill(pid, signal.SIGTERM)
            wait_gone(pid)
        shutil.rmtree(path, ignore_errors=True)


def listeners(socket: Path) -> list[int]:
    out = subprocess.run(["ss", "-xlpn"], capture_output=True, text=True, check=True).stdout
    return [
        int(part.split("=")[1])
        for line in out.splitlines()
        if f" {socket} " in line
        for part in line.replace(",", " ").replace("(", " ").split()
        if part.startswith("pid=")
    ]


def wait_gone(pid: int, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)


def run_script(socket: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), str(socket)], cwd=ROOT, capture_output=True, text=True, timeout=180
    )


def starts_a_container(socket: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["podman", "--remote", "--url", f"unix://{socket}", *PROBE],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_service_is_started_from_the_root_and_a_healthy_one_is_kept(scratch: Path) -> None:
    socket = scratch / "podman.sock"
    first = run_script(socket)
    assert first.returncode == 0, first.stderr
    (pid,) = listeners(socket)
    assert int((scratch / "podman-service.pid").read_text()) == pid
    assert os.readlink(f"/proc/{pid}/cwd") == "/"
    assert starts_a_container(socket).returncode == 0
    again = run_script(socket)
    assert again.returncode == 0, again.stderr
    assert listeners(socket) == [pid]  # kept as it was
    assert again.stderr == ""


def test_a_service_whose_working_directory_is_gone_is_restarted(scratch: Path) -> None:
    socket = scratch / "podman.sock"
    clone = scratch / "clone"  # a fresh clone's folder, where CI once started the service
    clone.mkdir()
    broken = subprocess.Popen(
        ["podman", "system", "service", "--time=0", f"unix://{socket}"],
        cwd=clone,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not listeners(socket) and time.monotonic() < deadline:
            time.sleep(0.1)
        clone.rmdir()  # the clone is removed; the service lives on
        refused = starts_a_container(socket)
        assert refused.returncode != 0
        assert "broken pipe" in refused.stderr  # what CI saw: a ping answers, a start fails
        fixed = run_script(socket)
        assert fixed.returncode == 0, fixed.stderr
        assert "answers but cannot start a container" in fixed.stderr
        assert broken.wait(timeout=30) is not None  # stopped by the script
        (pid,) = listeners(socket)
        assert pid != broken.pid
        assert os.readlink(f"/proc/{pid}/cwd") == "/"
        assert starts_a_container(socket).returncode == 0
    finally:
        if broken.poll() is None:
            broken.kill()
        broken.wait()
