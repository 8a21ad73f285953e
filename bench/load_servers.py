"""The servers ``bench/load.py`` measures: start them, sample their processes, stop them.

- ``rackem up`` in one process (the default), or every service as its own process
  (``rackem serve NAME``, as ``tests/system/stack.py`` runs them) on a Redis of its own,
  with any number of table replicas and gateways;
- the bare echo server (``bench/echo_server.py``);
- per process, from ``/proc``: CPU seconds, seconds spent runnable but waiting for a
  CPU (``schedstat``: how much the rest of the machine held it back), and RSS.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis
import redis.asyncio as aioredis

from services.common.registry import RedisRegistry

__all__ = [
    "Processes",
    "Sample",
    "Servers",
    "cpu_s",
    "pin",
    "record_profiles",
    "start_echo",
    "start_servers",
    "stop_process",
]

ROOT = Path(__file__).resolve().parents[1]
LOCAL = "127.0.0.1"
READY_TIMEOUT_S = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOCAL, 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_ready(url: str, alive: list[subprocess.Popen[bytes]], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for process in alive:
            if process.poll() is not None:
                raise SystemExit(f"a server process exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"{url} was not ready after {timeout} s")


def stop_process(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


@dataclass
class Servers:
    """What ``start_servers`` started: each gateway's WebSocket URL and /metrics URL (on its
    metrics port, by the gateway's process name), the processes by name, and the Redis URL
    ("": none)."""

    urls: list[str] = field(default_factory=list)
    metrics_urls: dict[str, str] = field(default_factory=dict)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    stoppers: list[contextlib.ExitStack] = field(default_factory=list)
    redis_url: str = ""

    @property
    def url(self) -> str:
        """The first gateway's."""
        return self.urls[0]

    @property
    def pids(self) -> dict[str, int]:
        return {name: process.pid for name, process in self.processes.items()}

    def live_tables(self) -> dict[str, int]:
        """Live tables by table replica, as each last heartbeat them into the registry
        (empty without Redis)."""
        if not self.redis_url:
            return {}
        return asyncio.run(_live_tables(self.redis_url))

    def stop(self) -> None:
        for stack in reversed(self.stoppers):
            stack.close()
        for process in reversed(list(self.processes.values())):
            stop_process(process)


def start_servers(kind: str, env: dict[str, str], tables: int = 1, gateways: int = 1) -> Servers:
    """``kind`` "up": ``rackem up``; "processes": each service its own process on Redis,
    ``tables`` table replicas and ``gateways`` gateways."""
    settings = {"GAMES_PER_IP": "0", "LOG_LEVEL": "WARNING", **env}
    if kind == "up":
        return _start_up(settings)
    return _start_processes(settings, tables, gateways)


def _start_up(settings: dict[str, str]) -> Servers:
    port, metrics_port = free_port(), free_port()
    environ = {**os.environ, "METRICS_PORT": str(metrics_port), **settings}
    environ.pop("REDIS_URL", None)
    data = tempfile.mkdtemp(prefix="rackem-bench-")  # no records of earlier runs
    command = [sys.executable, "-m", "rackem.cli", "up", "--port", str(port), "--no-browser"]
    process = subprocess.Popen(
        [*command, "--data", data],
        cwd=ROOT,
        env=environ,
        stdout=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    metrics_url = f"http://{LOCAL}:{metrics_port}/metrics"
    servers = Servers(
        [f"ws://{LOCAL}:{port}/ws"], {"rackem up": metrics_url}, {"rackem up": process}
    )
    try:
        _wait_ready(f"http://{LOCAL}:{port}/readyz", [process], READY_TIMEOUT_S)
    except BaseException:
        servers.stop()
        raise
    return servers


def _start_processes(settings: dict[str, str], tables: int, gateways: int) -> Servers:
    """Redis (``redis-server``, durable as deployed: AOF fsynced every second, a password)
    and ``tests/system/stack.py``'s services: every gateway on the one matchmaker, every
    table replica in its registry."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    # The system tests' runner; loaded by name, so these figures never type-check the tests.
    stack_class: Any = importlib.import_module("tests.system.stack").Stack

    cleanup = contextlib.ExitStack()
    servers = Servers(stoppers=[cleanup])
    try:
        workdir = Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="rackem-load-")))
        redis_port = free_port()
        password = secrets.token_hex(16)
        command = ["redis-server", "--port", str(redis_port), "--bind", LOCAL]
        command += ["--dir", str(workdir), "--save", "", "--maxclients", "20000"]
        command += ["--appendonly", "yes", "--appendfsync", "everysec"]
        command += ["--requirepass", password]
        redis = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
        servers.processes["redis"] = redis
        _wait_redis(redis_port, password, redis)
        servers.redis_url = f"redis://:{password}@{LOCAL}:{redis_port}/0"
        stack = stack_class(workdir, servers.redis_url, settings)
        stack.build(tables=tables, gateways=gateways)
        cleanup.callback(stack.stop)
        stack.start(READY_TIMEOUT_S)
        for name, service in stack.services.items():
            assert service.process is not None
            servers.processes[name] = service.process
        servers.urls, servers.metrics_urls = stack.wss, stack.metrics_urls
    except BaseException:
        servers.stop()
        raise
    return servers


def _wait_redis(port: int, password: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("redis-server exited")
        with (
            contextlib.suppress(redis.RedisError),
            redis.Redis(port=port, password=password, socket_timeout=1) as client,
        ):
            if client.ping():
                return
        time.sleep(0.1)
    raise SystemExit("redis-server did not answer")


async def _live_tables(url: str) -> dict[str, int]:
    client = aioredis.from_url(url, decode_responses=True)
    try:
        return {replica.id: replica.load for replica in await RedisRegistry(client).live()}
    except redis.RedisError:
        return {}
    finally:
        await client.aclose()


def start_echo() -> tuple[subprocess.Popen[bytes], str]:
    """``bench/echo_server.py`` on a free port; the process and its URL."""
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "echo_server.py"), "--port", "0"],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    assert process.stdout is not None
    line = process.stdout.readline().decode()
    match = re.fullmatch(r"listening (\d+)\s*", line)
    if match is None:
        stop_process(process)
        raise SystemExit(f"the echo server did not start: {line!r}")
    return process, f"ws://{LOCAL}:{match.group(1)}/ws"


def record_profiles(
    pids: dict[str, int], seconds: float, prefix: str
) -> list[subprocess.Popen[bytes]]:
    """``py-spy record`` (sampled without stopping the process) of each of ``pids`` for
    ``seconds``, as collapsed stacks in ``PREFIX.NAME.txt`` (``bench/spy_summary.py`` reads
    them). Nothing if py-spy is not installed (``pip install py-spy``)."""
    if shutil.which("py-spy") is None:
        print("bench/load.py: py-spy is not installed; no profile", file=sys.stderr)
        return []
    spies = []
    for name, pid in pids.items():
        out = f"{prefix}.{re.sub(r'[^A-Za-z0-9_-]+', '_', name)}.txt"
        command = ["py-spy", "record", "--nonblocking", "--format", "raw", "--rate", "100"]
        command += ["--duration", str(max(1, round(seconds))), "--pid", str(pid), "--output", out]
        spies.append(
            subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )
    return spies


# -- sampling /proc -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sample:
    at: float  # time.monotonic()
    cpu: dict[str, float]  # CPU seconds (user + system) by process name
    waited: dict[str, float]  # seconds runnable but waiting for a CPU, by process name
    rss: dict[str, int]  # bytes by process name

    def cpu_since(self, before: Sample) -> dict[str, float]:
        return {k: v - before.cpu[k] for k, v in self.cpu.items() if k in before.cpu}

    def waited_since(self, before: Sample) -> dict[str, float]:
        return {k: v - before.waited[k] for k, v in self.waited.items() if k in before.waited}


class Processes:
    """The server processes to sample, by name (none: nothing is sampled)."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids

    def sample(self) -> Sample:
        cpu, waited, rss = {}, {}, {}
        for name, pid in self.pids.items():
            with contextlib.suppress(OSError, ValueError, IndexError):
                proc = Path(f"/proc/{pid}")
                cpu[name] = cpu_s(pid)
                waited[name] = sum(_schedstat_wait(task) for task in (proc / "task").iterdir())
                for line in (proc / "status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        rss[name] = int(line.split()[1]) * 1024
        return Sample(time.monotonic(), cpu, waited, rss)


def pin(pids: Iterable[int], cpus: set[int]) -> None:
    """Every thread of each of ``pids`` on ``cpus`` (threads made later inherit it)."""
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(ProcessLookupError):
                os.sched_setaffinity(int(task.name), cpus)


def cpu_s(pid: int) -> float:
    """A process's user + system CPU seconds, from ``/proc`` (clock-tick resolution)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _schedstat_wait(task: Path) -> float:
    try:
        return int((task / "schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0
