"""The whole system as separate processes: bot, table replicas, matchmaker, gateways on Redis.

Each service runs as ``rackem serve NAME`` (the same command the container image
uses), configured only by environment variables, and logs JSON lines into a file the
tests can read (match records, for one). Each binds port 0 (``PORT=0``, and
``METRICS_PORT=0`` for its /metrics) and reports the ports it got in its ``listening`` line
(services/common/running.py), read here from its log: a port picked here (bind and
release) and bound later by the service could meanwhile be taken by another server.
So an address is known once its service has started: what depends on one
(``BOT_ADDR``, ``TABLE_ADDR``, ``MATCHMAKER_ADDR``) is an ``env`` value given as a
callable, read when the dependent starts, and ``Stack.start`` starts the services in
dependency order (bot, tables, matchmaker, gateways).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.channels import OWN_CONNECTIONS

__all__ = ["Env", "Service", "Stack"]

Env = Mapping[str, str | Callable[[], str]]
"""A service's environment: a value, or a callable read at its start (another's address)."""


def _address_of(service: Service) -> Callable[[], str]:
    return lambda: service.addr


@dataclass
class Service:
    name: str
    env: dict[str, str | Callable[[], str]]
    log: Path
    process: subprocess.Popen[bytes] | None = None
    port: int = 0  # as its last start reported it (``listening``); 0 until then
    metrics_port: int = 0  # its /metrics, as reported
    _since: int = field(default=0, init=False, repr=False)  # the log's size at the last start

    @property
    def addr(self) -> str:
        if not self.port:
            raise RuntimeError(f"{self.name} has not reported its port (started in order?)")
        return f"127.0.0.1:{self.port}"

    def start(self, port: int = 0) -> None:
        """Start the process on ``port`` (0: any free one; ``wait_listening`` learns it).
        ``env`` values given as callables are read now."""
        env = {key: value() if callable(value) else value for key, value in self.env.items()}
        self.port = self.metrics_port = 0
        self._since = self.log.stat().st_size if self.log.exists() else 0
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "rackem.cli", "serve", self.name],
                env={**os.environ, **env, "PORT": str(port), "HOST": "127.0.0.1"},
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )

    def wait_listening(self, timeout: float) -> None:
        """Until the process started last logs ``listening``: then ``port`` and
        ``metrics_port`` are the ones it bound."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for record in self.records(self._since):
                if record.get("event") == "listening":
                    self.port = int(record["port"])
                    self.metrics_port = int(record.get("metrics_port", 0))
                    return
            if not self.alive():
                raise RuntimeError(f"{self.name} exited:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.05)
        raise TimeoutError(f"{self.name} did not report its port after {timeout} s")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> int | None:
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        return self.process.returncode

    def records(self, since: int = 0) -> Iterator[dict[str, Any]]:
        """The JSON log lines this service wrote (from byte ``since`` of its log)."""
        with self.log.open("rb") as raw:
            raw.seek(since)
            text = raw.read().decode("utf-8", errors="replace")
        for line in text.splitlines():
            if line.startswith("{"):
                try:
                    yield json.loads(line)
                except ValueError:
                    continue


@dataclass
class Stack:
    workdir: Path
    redis_url: str
    settings: Mapping[str, str] = field(default_factory=dict)
    services: dict[str, Service] = field(default_factory=dict)

    def add(self, name: str, kind: str, env: Env) -> Service:
        service = Service(kind, dict(env), self.workdir / f"{name}.log")
        self.services[name] = service
        return service

    def build(self, tables: int = 1, gateways: int = 1) -> None:
        """Bot, ``tables`` replicas (``table0``…), matchmaker and ``gateways`` gateways, each
        with a port and a metrics port of its own, all on one matchmaker and one Redis (as
        a Deployment's pods behind a Service): ``gateway`` alone, else ``gateway0``…

        A replica advertises the address it listens on (its default ``ADVERTISE_ADDR``:
        ``HOST`` and the port it bound)."""
        common = {
            "REDIS_URL": self.redis_url,
            "LOG_LEVEL": "INFO",
            "METRICS_PORT": "0",
            **self.settings,
        }
        bot = self.add("bot", "bot", common)
        for i in range(tables):
            self.add(
                f"table{i}",
                "table",
                {**common, "BOT_ADDR": _address_of(bot), "REPLICA_ID": f"replica-{i}"},
            )
        first_table = _address_of(self.services["table0"])
        mm = self.add("matchmaker", "matchmaker", {**common, "TABLE_ADDR": first_table})
        for i in range(gateways):
            self.add(
                "gateway" if gateways == 1 else f"gateway{i}",
                "gateway",
                {
                    **common,
                    "MATCHMAKER_ADDR": _address_of(mm),
                    "TABLE_ADDR": first_table,
                    "BOT_ADDR": _address_of(bot),
                },
            )

    @property
    def gateways(self) -> list[Service]:
        return [service for service in self.services.values() if service.name == "gateway"]

    def start(self, timeout: float = 60.0) -> None:
        """Each service in the order added (``build``'s: the order they depend on each
        other), once the one before serves."""
        for service in self.services.values():
            self.launch(service, timeout)

    def launch(self, service: Service, timeout: float = 60.0, port: int = 0) -> None:
        """Start ``service`` and wait until it serves: its gRPC health, a gateway's /readyz.

        A restart (``service.stop()``, then this) binds a new port, as a restarted pod
        gets a new address; services started before keep the address they were given.
        ``port``: one to bind instead, such as the one it reported before, for a test that
        needs the same address (it was ours until the stop, free only since)."""
        service.start(port)
        service.wait_listening(timeout)
        if service.name == "gateway":
            self.wait_http(service, "/readyz", timeout)
        else:
            self.wait_grpc(service, timeout)

    def stop(self) -> None:
        for service in reversed(list(self.services.values())):
            service.stop()

    @property
    def url(self) -> str:
        """The first gateway's."""
        return self.urls[0]

    @property
    def ws(self) -> str:
        """The first gateway's."""
        return self.wss[0]

    @property
    def urls(self) -> list[str]:
        return [f"http://127.0.0.1:{gateway.port}" for gateway in self.gateways]

    @property
    def wss(self) -> list[str]:
        return [f"ws://127.0.0.1:{gateway.port}/ws" for gateway in self.gateways]

    @property
    def metrics_urls(self) -> dict[str, str]:
        """Each gateway's /metrics (on its METRICS_PORT), by its name in ``services``."""
        return {
            name: f"http://127.0.0.1:{service.metrics_port}/metrics"
            for name, service in self.services.items()
            if service.name == "gateway"
        }

    def all_metrics_urls(self) -> dict[str, str]:
        """Every service's /metrics (on its METRICS_PORT), by its name in ``services``."""
        return {
            name: f"http://127.0.0.1:{service.metrics_port}/metrics"
            for name, service in self.services.items()
        }

    def wait_grpc(self, service: Service, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not service.alive():
                raise RuntimeError(f"{service.name} exited:\n{service.log.read_text()[-3000:]}")
            try:
                with grpc.insecure_channel(service.addr, options=OWN_CONNECTIONS) as channel:
                    stub = health_pb2_grpc.HealthStub(channel)
                    reply = stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        return
            except grpc.RpcError:
                pass
            time.sleep(0.1)
        raise TimeoutError(f"{service.name} not serving after {timeout} s")

    def wait_http(self, gateway: Service, path: str, timeout: float) -> None:
        url = f"http://127.0.0.1:{gateway.port}{path}"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not gateway.alive():
                raise RuntimeError(f"gateway exited:\n{gateway.log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(url, timeout=1) as reply:
                    if reply.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise TimeoutError(f"{url} not ready after {timeout} s")

    def get_json(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=10) as reply:
            return json.loads(reply.read())

    def match_records(self) -> list[dict[str, Any]]:
        out = []
        for name, service in self.services.items():
            if name.startswith("table"):
                out.extend(r for r in service.records() if r.get("event") == "match_record")
        return out
