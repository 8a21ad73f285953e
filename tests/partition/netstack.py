"""The process-per-service stack (tests/system/stack.py) on a network of its own
(tests/partition/netns.py): every service in its own namespace, listening on its own
address and advertising it, as pods on a node.

    2 gateways, 3 table replicas, the matchmaker, the bot service,
    a Redis primary, its two replicas and three Sentinels (quorum two), as
    k8s/components/redis-sentinel runs them.

Each namespace has its ports to itself, so every service binds the port it would in a
pod (gateway 8000, matchmaker 50051, table 50052, bot 50053, /metrics 9100, Redis 6379,
Sentinel 26379) and is known by its address alone; a restarted one (after a kill) comes
back on the same address. The services find Redis through the Sentinels
(``redis+sentinel://``, the tables acknowledging an append and the matchmaker a seat or
a room once a replica has it: ``REDIS_WAIT_REPLICAS=1``, in every service's env), and
the tables through ``TABLE_ADDR``, the three replicas' addresses as one balanced target
(``ipv4:a:50052,b:50052,c:50052``: a Service in front of the replicas), as a gateway and
the matchmaker would in Kubernetes.

``groups`` names the nodes by role, for cuts: ``redis`` (the three servers and the three
Sentinels), ``tables``, ``gateways``, ``clients`` (this process: the players).
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import redis
from grpc_health.v1 import health_pb2, health_pb2_grpc
from redis_engines import _binary
from system.stack import Service

from services.common.channels import OWN_CONNECTIONS

from .netns import Network, Node

__all__ = ["PORTS", "NetService", "NetStack", "RedisProcess"]

PORTS = {"gateway": 8000, "matchmaker": 50051, "table": 50052, "bot": 50053}
METRICS_PORT = 9100
REDIS_PORT = 6379
SENTINEL_PORT = 26379
SERVICE = "rackem"
START_TIMEOUT_S = 60.0


@dataclass
class NetService(Service):
    """A service of the stack in its node's namespace, on the node's address."""

    node: Node | None = None

    @property
    def host(self) -> str:
        assert self.node is not None
        return self.node.addr

    @property
    def addr(self) -> str:
        return f"{self.host}:{self.port or PORTS[self.name]}"

    def start(self, port: int = 0) -> None:
        assert self.node is not None
        env = {key: value() if callable(value) else value for key, value in self.env.items()}
        self.port = self.metrics_port = 0
        self._since = self.log.stat().st_size if self.log.exists() else 0
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [*self.node.exec_prefix, sys.executable, "-m", "rackem.cli", "serve", self.name],
                env={
                    **os.environ,
                    **env,
                    "HOST": self.host,
                    "PORT": str(port or PORTS[self.name]),
                    "METRICS_PORT": str(METRICS_PORT),
                },
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )

    def pause(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)


@dataclass
class RedisProcess:
    """A ``redis-server`` or ``redis-sentinel`` in its node's namespace."""

    name: str
    node: Node
    workdir: Path
    args: list[str]
    sentinel: bool = False
    process: subprocess.Popen[bytes] | None = None

    @property
    def port(self) -> int:
        return SENTINEL_PORT if self.sentinel else REDIS_PORT

    @property
    def log(self) -> Path:
        return self.workdir / f"{self.name}.log"

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        if self.sentinel:
            config = self.workdir / f"{self.name}.conf"
            config.write_text("\n".join(self.args) + "\n")  # afresh: Sentinel rewrites it
            argv = [_binary("redis-sentinel"), str(config)]
        else:
            argv = [_binary("redis-server"), *self.args]
        self.process = subprocess.Popen([*self.node.exec_prefix, *argv], stdin=subprocess.DEVNULL)

    def client(self, password: str | None, timeout: float = 2.0) -> redis.Redis:
        return redis.Redis(
            host=self.node.addr,
            port=self.port,
            password=password,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            decode_responses=True,
        )

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def signal(self, sig: int) -> None:
        if self.alive():
            assert self.process is not None
            self.process.send_signal(sig)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


@dataclass
class NetStack:
    workdir: Path
    net: Network
    settings: Mapping[str, str] = field(default_factory=dict)
    tables: int = 3
    gateways: int = 2
    redis_replicas: int = 2  # as k8s/components/redis-sentinel runs (of which one is waited for)
    services: dict[str, NetService] = field(default_factory=dict)
    engines: dict[str, RedisProcess] = field(default_factory=dict)
    password: str = field(default_factory=lambda: secrets.token_hex(12))

    # -- building -----------------------------------------------------------------------

    def build(self, down_after_ms: int = 1000) -> None:
        """Every node and process of the stack (nothing started yet)."""
        primary = self.net.add("redis0")
        standbys = [self.net.add(f"redis{i + 1}") for i in range(self.redis_replicas)]
        base = [
            "--port", str(REDIS_PORT),
            "--appendonly", "yes",
            "--appendfsync", "everysec",
            "--save", "",
            "--requirepass", self.password,
            "--masterauth", self.password,
            "--protected-mode", "no",
        ]  # fmt: skip
        follow = ["--replicaof", primary.addr, "6379"]
        for node, extra in ((primary, []), *((standby, follow) for standby in standbys)):
            directory = self.workdir / node.name
            self.engines[node.name] = RedisProcess(
                node.name,
                node,
                directory,
                [*base, "--bind", node.addr, "--dir", str(directory),
                 "--logfile", str(directory / f"{node.name}.log"), *extra],
            )  # fmt: skip
        for i in range(3):
            node = self.net.add(f"sentinel{i}")
            directory = self.workdir / node.name
            self.engines[node.name] = RedisProcess(
                node.name,
                node,
                directory,
                [
                    f"port {SENTINEL_PORT}",
                    f"bind {node.addr}",
                    "protected-mode no",
                    f"dir {directory}",
                    f"logfile {directory / 'sentinel.log'}",
                    f"sentinel monitor {SERVICE} {primary.addr} {REDIS_PORT} 2",
                    f"sentinel auth-pass {SERVICE} {self.password}",
                    f"sentinel down-after-milliseconds {SERVICE} {down_after_ms}",
                    f"sentinel failover-timeout {SERVICE} 10000",
                    f"sentinel parallel-syncs {SERVICE} 1",
                ],
                sentinel=True,
            )
        sentinels = ",".join(f"{p.node.addr}:{SENTINEL_PORT}" for p in self.sentinels)
        common: dict[str, str | Callable[[], str]] = {
            "REDIS_URL": f"redis+sentinel://:{self.password}@{sentinels}/{SERVICE}/0",
            "REDIS_WAIT_REPLICAS": "1",
            "REDIS_WAIT_MS": "2000",
            "LOG_LEVEL": "INFO",
            **self.settings,
        }
        bot = self._add("bot", "bot", common)
        tables = [self.net.add(f"table{i}") for i in range(self.tables)]
        table_addr = "ipv4:" + ",".join(f"{n.addr}:{PORTS['table']}" for n in tables)
        for i, node in enumerate(tables):
            self._add(
                node.name,
                "table",
                {**common, "BOT_ADDR": bot.addr, "REPLICA_ID": f"replica-{i}"},
                node,
            )
        mm = self._add("matchmaker", "matchmaker", {**common, "TABLE_ADDR": table_addr})
        for i in range(self.gateways):
            self._add(
                f"gateway{i}",
                "gateway",
                {
                    **common,
                    "MATCHMAKER_ADDR": mm.addr,
                    "TABLE_ADDR": table_addr,
                    "BOT_ADDR": bot.addr,
                },
            )

    def _add(
        self,
        name: str,
        kind: str,
        env: Mapping[str, str | Callable[[], str]],
        node: Node | None = None,
    ) -> NetService:
        node = node or self.net.add(name)
        service = NetService(kind, dict(env), self.workdir / f"{name}.log", node=node)
        self.services[name] = service
        return service

    # -- the nodes by role ------------------------------------------------------------------

    @property
    def sentinels(self) -> list[RedisProcess]:
        return [p for p in self.engines.values() if p.sentinel]

    @property
    def servers(self) -> list[RedisProcess]:
        return [p for p in self.engines.values() if not p.sentinel]

    def named(self, prefix: str) -> list[str]:
        return [name for name in self.services if name.startswith(prefix)]

    @property
    def groups(self) -> dict[str, list[Node]]:
        nodes = self.net.nodes
        return {
            "redis": [p.node for p in self.engines.values()],
            "tables": [nodes[n] for n in self.named("table")],
            "gateways": [nodes[n] for n in self.named("gateway")],
            "clients": [self.net.host],
        }

    @property
    def wss(self) -> list[str]:
        return [
            f"ws://{self.services[n].host}:{PORTS['gateway']}/ws" for n in self.named("gateway")
        ]

    @property
    def urls(self) -> list[str]:
        return [f"http://{self.services[n].host}:{PORTS['gateway']}" for n in self.named("gateway")]

    # -- running ------------------------------------------------------------------------

    def start(self) -> None:
        for server in self.servers:
            server.start()
            self._wait(partial(_pings, server, self.password), server.name)
        self.wait_synced()
        for sentinel in self.sentinels:
            sentinel.start()
        self._wait(self._sentinels_agree, "the sentinels")
        for service in self.services.values():
            self.launch(service)

    def launch(self, service: NetService, timeout: float = START_TIMEOUT_S) -> None:
        """Start ``service`` (again) and wait until it serves."""
        service.start()
        service.wait_listening(timeout)
        if service.name == "gateway":
            url = f"http://{service.addr}/readyz"
            self._wait(lambda: _http_ok(url), f"{url}", timeout)
        else:
            self._wait(lambda: _grpc_serving(service.addr), service.name, timeout, service)

    def stop(self) -> None:
        for service in reversed(list(self.services.values())):
            if service.alive():
                assert service.process is not None
                service.process.send_signal(signal.SIGCONT)
            service.stop(timeout=10)
        for process in reversed(list(self.engines.values())):
            process.stop()

    def _wait(
        self,
        ready: Callable[[], bool],
        what: str,
        timeout: float = START_TIMEOUT_S,
        service: NetService | None = None,
    ) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if service is not None and not service.alive():
                raise RuntimeError(f"{what} exited:\n{service.log.read_text()[-3000:]}")
            try:
                if ready():
                    return
            except (OSError, redis.RedisError, grpc.RpcError):
                pass
            time.sleep(0.1)
        raise TimeoutError(f"{what} not ready after {timeout} s")

    # -- Redis ----------------------------------------------------------------------------

    def _sentinels_agree(self) -> bool:
        for sentinel in self.sentinels:
            with sentinel.client(None) as client:
                state = client.sentinel_master(SERVICE)
            if (
                int(state["num-other-sentinels"]) < 2
                or int(state["num-slaves"]) < self.redis_replicas
            ):
                return False
        return True

    def primary_addrs(self) -> dict[str, str | None]:
        """Which server each Sentinel names as the primary now (None: it does not answer)."""
        out: dict[str, str | None] = {}
        for sentinel in self.sentinels:
            try:
                with sentinel.client(None, timeout=1) as client:
                    host, _port = client.sentinel_get_master_addr_by_name(SERVICE)
                out[sentinel.name] = str(host)
            except (redis.RedisError, OSError, TypeError):
                out[sentinel.name] = None
        return out

    def primary(self) -> RedisProcess:
        """The server most Sentinels name as the primary."""
        named = [a for a in self.primary_addrs().values() if a]
        if not named:
            raise RuntimeError("no sentinel answers")
        addr = max(set(named), key=named.count)
        return next(s for s in self.servers if s.node.addr == addr)

    def wait_synced(self, timeout: float = 60.0) -> None:
        """Until the primary (as the Sentinels say, once they run) has every replica online."""

        def synced() -> bool:
            primary = self.primary() if any(s.alive() for s in self.sentinels) else None
            primary = primary or self.servers[0]
            with primary.client(self.password) as client:
                info = client.info("replication")
            replicas = self.redis_replicas
            return (
                info.get("role") == "master"
                and int(info.get("connected_slaves", 0)) >= replicas
                and all(info.get(f"slave{i}", {}).get("state") == "online" for i in range(replicas))
            )

        self._wait(synced, "the Redis replicas", timeout)

    def redis_client(self) -> redis.Redis:
        return self.primary().client(self.password, timeout=5)

    def owners(self) -> dict[str, str]:
        """Each live table's lease holder (its replica's node name), from the primary."""
        by_owner = {}
        for name in self.named("table"):
            service = self.services[name]
            by_owner[service.addr] = name
            by_owner[f"replica-{name.removeprefix('table')}"] = name
        out: dict[str, str] = {}
        with self.redis_client() as client:
            for key in client.scan_iter("rackem:{t:*}:lease", count=500):
                owner = client.get(key)
                if owner is None:
                    continue
                table_id = str(key).split("{t:", 1)[1].split("}", 1)[0]
                out[table_id] = next(
                    (name for found, name in by_owner.items() if found in str(owner)), str(owner)
                )
        return out

    # -- the services' logs ---------------------------------------------------------------

    def records(self, prefix: str = "") -> list[tuple[str, dict[str, Any]]]:
        """Every JSON log line of the services named ``prefix…``, with its service's name."""
        return [
            (name, record)
            for name, service in self.services.items()
            if name.startswith(prefix) and service.log.exists()
            for record in service.records()
        ]

    def get_json(self, path: str, gateway: int = 0, timeout: float = 10.0) -> Any:
        with urllib.request.urlopen(self.urls[gateway] + path, timeout=timeout) as reply:
            return json.loads(reply.read())


def _pings(server: RedisProcess, password: str) -> bool:
    with server.client(password) as client:
        return bool(client.ping())


def _http_ok(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=1) as reply:
        return bool(reply.status == 200)


def _grpc_serving(addr: str) -> bool:
    with grpc.insecure_channel(addr, options=OWN_CONNECTIONS) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        reply = stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)
