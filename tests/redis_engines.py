"""Real Redis engines for the tests: Debian's ``redis-server`` and ``redis-sentinel`` as
processes on loopback, each on a random free port, durable as the project runs them
(AOF, ``appendfsync everysec``, a password).

Three shapes, one ``url`` each for ``services.common.redis_client.connect``:

- ``Single``: one server (``redis://``);
- ``Cluster``: three primaries, no replicas, slots spread by ``redis-cli --cluster
  create`` (``redis+cluster://``);
- ``SentinelGroup``: a primary, a replica and three Sentinels watching them
  (``redis+sentinel://``), with ``kill_primary`` to SIGKILL the primary and
  ``restart`` to bring a killed server back (as the replica of the primary the Sentinels name).

Used by the contract tests (tests/conftest.py's ``redis_engine`` fixtures) and the
whole-system tests (tests/system/).

Redis cannot bind port 0 and say which port it got, so a port is picked here (bind and
release) and bound by the process later: another process may take it in between. A
server or Sentinel that exits because its port is taken (its log: "Address already in
use") is started again on another port, a few times (``TRIES``); a restart keeps its
port, by which clients and Sentinels know it.
"""

from __future__ import annotations

import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

__all__ = [
    "KINDS",
    "Cluster",
    "Engines",
    "SentinelGroup",
    "Server",
    "Single",
    "free_port",
    "running",
]

SERVICE = "rackem"
START_TIMEOUT_S = 20.0
TRIES = 5  # starts on a new port, when another process took the one picked
ONCE = Retry(NoBackoff(), 0)  # a start's pings: each once (what holds the port may never answer)
IN_USE = "Address already in use"  # how redis-server and redis-sentinel say so in their logs


def free_port(below: int = 65536) -> int:
    """A free loopback port under ``below`` (a cluster node also binds its port + 10000)."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port: int = sock.getsockname()[1]
        if port < below:
            return port


class PortTaken(RuntimeError):
    """The process exited because another one had bound its port (or its cluster bus port)."""


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def _wait_serving(
    what: str, process: subprocess.Popen[bytes], ping: Callable[[], object], log: Path, since: int
) -> None:
    """Until ``ping()`` is true; if ``process`` exits first, raise with what it logged from
    byte ``since`` of ``log`` (``PortTaken`` if its port was taken)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if process.poll() is not None:
            with log.open("rb") as raw:
                raw.seek(since)
                text = raw.read().decode(errors="replace")
            error = PortTaken if IN_USE in text else RuntimeError
            raise error(f"{what} exited:\n{text[-2000:]}")
        try:
            if ping():
                return
        except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
            # (a timeout: what holds the port may be another server, one that never answers)
            if time.monotonic() > deadline:
                raise
        time.sleep(0.05)


def _binary(name: str) -> str:
    path = shutil.which(name) or (f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None)
    if path is None:
        raise RuntimeError(f"{name} is not installed (scripts/setup installs it with apt)")
    return path


@dataclass
class Server:
    """One ``redis-server`` process; ``args`` are its settings after the common ones."""

    workdir: Path
    password: str
    args: list[str] = field(default_factory=list)
    below: int = 65536  # its port is under this (a cluster node also binds its port + 10000)
    port: int = 0  # 0: a free one under ``below``, picked now
    process: subprocess.Popen[bytes] | None = None

    def __post_init__(self) -> None:
        self.port = self.port or free_port(self.below)

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.workdir / "redis.log"

    def start(self) -> None:
        """Start and wait until it answers. A first start whose port another process took
        meanwhile moves to another free port (``TRIES`` in all); a restart keeps its port."""
        first = self.process is None
        for tries_left in reversed(range(TRIES if first else 1)):
            try:
                self._start()
                return
            except PortTaken:
                if not tries_left:
                    raise
                self.port = free_port(self.below)

    def _start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        since = _size(self.log)
        command = [
            _binary("redis-server"),
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.workdir),
            "--appendonly", "yes",
            "--appendfsync", "everysec",
            "--save", "",
            "--requirepass", self.password,
            "--masterauth", self.password,
            "--logfile", str(self.log),
            # A replica (re)joining is sent the data at once, not after the 5 s a full
            # sync waits by default for other replicas to join it.
            "--repl-diskless-sync-delay", "0",
            *self.args,
        ]  # fmt: skip
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL)
        _wait_serving(f"redis-server on {self.port}", self.process, self._ping, self.log, since)

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, password=self.password, socket_timeout=5)

    def _ping(self) -> bool:
        with redis.Redis(
            port=self.port, password=self.password, socket_timeout=1, retry=ONCE
        ) as client:
            return _is(client, self.process)

    def kill(self) -> None:
        """SIGKILL, as a crash: what AOF has not yet written is lost."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


class Single:
    """One durable server."""

    def __init__(self, workdir: Path) -> None:
        self.password = secrets.token_hex(12)
        self.server = Server(workdir / "single", self.password)

    @property
    def url(self) -> str:
        return f"redis://:{self.password}@{self.server.addr}/0"

    def start(self) -> None:
        self.server.start()

    def flush(self) -> None:
        with self.server.client() as client:
            client.flushall()

    def stop(self) -> None:
        self.server.stop()


class Cluster:
    """Three primaries sharing the 16,384 slots, no replicas."""

    def __init__(self, workdir: Path, primaries: int = 3) -> None:
        self.password = secrets.token_hex(12)
        self.servers = []
        for i in range(primaries):
            server = Server(workdir / f"cluster{i}", self.password, below=55535)
            server.args = [
                "--cluster-enabled", "yes",
                "--cluster-config-file", str(server.workdir / "nodes.conf"),
                "--cluster-node-timeout", "2000",
            ]  # fmt: skip
            self.servers.append(server)

    @property
    def url(self) -> str:
        nodes = ",".join(s.addr for s in self.servers)
        return f"redis+cluster://:{self.password}@{nodes}"

    def start(self) -> None:
        for server in self.servers:
            server.start()
        subprocess.run(
            [
                _binary("redis-cli"),
                "-a",
                self.password,
                "--no-auth-warning",
                "--cluster",
                "create",
                *(s.addr for s in self.servers),
                "--cluster-replicas",
                "0",
                "--cluster-yes",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not all(self._ok(s) for s in self.servers):
            if time.monotonic() > deadline:
                raise RuntimeError("the cluster did not reach cluster_state:ok")
            time.sleep(0.1)

    @staticmethod
    def _ok(server: Server) -> bool:
        with server.client() as client:
            info = client.execute_command("CLUSTER", "INFO")
        text = info.decode() if isinstance(info, bytes) else str(info)
        return "cluster_state:ok" in text

    def flush(self) -> None:
        for server in self.servers:
            with server.client() as client:
                client.flushall()

    def stop(self) -> None:
        for server in self.servers:
            server.stop()


class SentinelGroup:
    """A primary, a replica and three Sentinels (quorum two) watching service ``rackem``."""

    def __init__(self, workdir: Path, down_after_ms: int = 1000) -> None:
        self.password = secrets.token_hex(12)
        self.workdir = workdir
        self.down_after_ms = down_after_ms
        self.primary = Server(workdir / "primary", self.password)
        self.replica = Server(workdir / "replica", self.password)
        self.sentinel_ports = [free_port() for _ in range(3)]  # as each bound it, once started
        self.sentinels: list[subprocess.Popen[bytes]] = []

    @property
    def url(self) -> str:
        nodes = ",".join(f"127.0.0.1:{p}" for p in self.sentinel_ports)
        return f"redis+sentinel://:{self.password}@{nodes}/{SERVICE}/0"

    @property
    def servers(self) -> list[Server]:
        return [self.primary, self.replica]

    def start(self) -> None:
        self.primary.start()
        self.replica.args = ["--replicaof", "127.0.0.1", str(self.primary.port)]  # as bound
        self.replica.start()
        for i in range(len(self.sentinel_ports)):
            self._start_sentinel(i)
        self.wait_synced()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not all(self._sees_all(p) for p in self.sentinel_ports):
            if time.monotonic() > deadline:
                raise RuntimeError("the sentinels did not find each other and the replica")
            time.sleep(0.1)

    def _start_sentinel(self, i: int) -> None:
        """Sentinel ``i`` on ``sentinel_ports[i]``, or on another port if that one was taken
        meanwhile (``TRIES`` in all); until it answers."""
        directory = self.workdir / f"sentinel{i}"
        directory.mkdir(parents=True, exist_ok=True)
        config, log = directory / "sentinel.conf", directory / "sentinel.log"
        for tries_left in reversed(range(TRIES)):
            port = self.sentinel_ports[i]
            config.write_text(  # afresh: a Sentinel rewrites its file
                f"port {port}\nbind 127.0.0.1\ndir {directory}\nlogfile {log}\n"
                f"sentinel monitor {SERVICE} 127.0.0.1 {self.primary.port} 2\n"
                f"sentinel auth-pass {SERVICE} {self.password}\n"
                f"sentinel down-after-milliseconds {SERVICE} {self.down_after_ms}\n"
                f"sentinel failover-timeout {SERVICE} 10000\n"
                f"sentinel parallel-syncs {SERVICE} 1\n"
            )
            since = _size(log)
            process = subprocess.Popen(
                [_binary("redis-sentinel"), str(config)], stdin=subprocess.DEVNULL
            )
            self.sentinels.append(process)  # stopped by ``stop`` whatever happens
            try:
                _wait_serving(
                    f"redis-sentinel on {port}", process, _pinger(port, process), log, since
                )
                return
            except PortTaken:
                if not tries_left:
                    raise
                self.sentinel_ports[i] = free_port()

    def _sees_all(self, port: int) -> bool:
        try:
            with redis.Redis(port=port, socket_timeout=2, decode_responses=True) as sentinel:
                state = sentinel.sentinel_master(SERVICE)
        except (redis.ConnectionError, redis.ResponseError):
            return False
        return int(state["num-other-sentinels"]) >= 2 and int(state["num-slaves"]) >= 1

    def primary_addr(self) -> tuple[str, int]:
        """Where the Sentinels say the primary is now."""
        for port in self.sentinel_ports:
            try:
                with redis.Redis(port=port, socket_timeout=2, decode_responses=True) as sentinel:
                    host, found = sentinel.sentinel_get_master_addr_by_name(SERVICE)
                    return str(host), int(found)
            except (redis.ConnectionError, redis.ResponseError):
                continue
        raise RuntimeError("no sentinel answers")

    def current_primary(self) -> Server:
        _, port = self.primary_addr()
        return next(s for s in self.servers if s.port == port)

    def wait_synced(self) -> None:
        """Until some replica is online and caught up with the current primary."""
        deadline = time.monotonic() + START_TIMEOUT_S * 2
        while time.monotonic() < deadline:
            try:
                primary = self.current_primary() if self.sentinels else self.primary
                with primary.client() as client:
                    info = client.info("replication")
                if info.get("role") == "master" and int(info.get("connected_slaves", 0)) >= 1:
                    replica = info.get("slave0", {})
                    if replica.get("state") == "online":
                        return
            except (redis.ConnectionError, redis.ResponseError, RuntimeError, StopIteration):
                pass
            time.sleep(0.1)
        raise RuntimeError("no replica caught up with the primary")

    def kill_primary(self) -> Server:
        """SIGKILL the current primary; the Sentinels promote the replica."""
        primary = self.current_primary()
        primary.kill()
        return primary

    def wait_failover(self, old: Server) -> Server:
        deadline = time.monotonic() + START_TIMEOUT_S * 2
        while time.monotonic() < deadline:
            try:
                if self.primary_addr()[1] != old.port:
                    return self.current_primary()
            except RuntimeError:
                pass
            time.sleep(0.1)
        raise RuntimeError("the sentinels did not fail over")

    def restart(self, server: Server) -> None:
        """Start a killed server again as the replica of the primary the Sentinels name, as
        the deployment's start script does (k8s/components/redis-sentinel/sentinel.yaml,
        ``redis.sh``). Started as a primary instead, it would hold its stale data until a
        Sentinel's next look at it (up to ten seconds) turned it into a replica; until then
        the group has no replica, and writes that wait for one (``REDIS_WAIT_REPLICAS``)
        would wait that long too."""
        host, port = self.primary_addr()
        server.args = ["--replicaof", host, str(port)]
        server.start()

    def flush(self) -> None:
        with self.current_primary().client() as client:
            client.flushall()
            client.execute_command("WAIT", 1, 5000)

    def stop(self) -> None:
        for sentinel in self.sentinels:
            if sentinel.poll() is None:
                sentinel.terminate()
                sentinel.wait(10)
        for server in self.servers:
            server.stop()


def _pinger(port: int, process: subprocess.Popen[bytes]) -> Callable[[], bool]:
    def ping() -> bool:
        with redis.Redis(port=port, socket_timeout=1, retry=ONCE) as client:
            return _is(client, process)

    return ping


def _is(client: redis.Redis, process: subprocess.Popen[bytes] | None) -> bool:
    """Whether the server ``client`` reaches is ``process``: another one may hold the port
    (a Sentinel with no password answers any), and ``process`` then exits as it fails to
    bind, which ``_wait_serving`` sees (``PortTaken``)."""
    return process is not None and client.info("server").get("process_id") == process.pid


Engine = Single | Cluster | SentinelGroup


@contextmanager
def running(engine: Engine) -> Iterator[Engine]:
    try:
        engine.start()
        yield engine
    finally:
        engine.stop()


KINDS = ("single", "cluster", "sentinel")
"""The engines every Redis contract test runs on."""


class Engines:
    """Each kind of engine started on first use and kept for the session (tests share
    one: keys of their own, as with ``redis_url``)."""

    def __init__(self, workdir: Path) -> None:
        self._workdir = workdir
        self._started: dict[str, Engine] = {}

    def get(self, kind: str) -> Engine:
        engine = self._started.get(kind)
        if engine is None:
            made: Engine
            if kind == "single":
                made = Single(self._workdir / kind)
            elif kind == "cluster":
                made = Cluster(self._workdir / kind)
            elif kind == "sentinel":
                made = SentinelGroup(self._workdir / kind)
            else:
                raise ValueError(f"no Redis engine {kind!r}")
            try:
                made.start()
            except BaseException:
                made.stop()
                raise
            engine = self._started[kind] = made
        return engine

    def url(self, kind: str) -> str:
        return self.get(kind).url

    def stop(self) -> None:
        for engine in self._started.values():
            engine.stop()
        self._started.clear()
