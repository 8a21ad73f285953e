"""The whole system as separate processes: bot, table replicas, matchmaker, gateways on Redis.

Each service runs as ``rackem serve NAME`` (the same command the container image
uses) on a free loopback port, configured only by environment variables, and logs
JSON lines into a file the tests can read (match records, for one).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.channels import OWN_CONNECTIONS

__all__ = ["Service", "Stack", "free_port"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Service:
    name: str
    port: int
    env: dict[str, str]
    log: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        env = {**os.environ, **self.env, "PORT": str(self.port), "HOST": "127.0.0.1"}
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "rackem.cli", "serve", self.name],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )

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

    def records(self) -> Iterator[dict[str, Any]]:
        """The JSON log lines this service wrote."""
        for line in self.log.read_text(encoding="utf-8", errors="replace").splitlines():
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

    def add(self, name: str, kind: str, env: Mapping[str, str]) -> Service:
        service = Service(kind, free_port(), dict(env), self.workdir / f"{name}.log")
        self.services[name] = service
        return service

    def build(self, tables: int = 1, gateways: int = 1) -> None:
        """Bot, ``tables`` replicas (``table0``…), matchmaker and ``gateways`` gateways, each
        with a port and a METRICS_PORT of its own, all on one matchmaker and one Redis (as
        a Deployment's pods behind a Service): ``gateway`` alone, else ``gateway0``…"""
        common = {"REDIS_URL": self.redis_url, "LOG_LEVEL": "INFO", **self.settings}
        bot = self.add("bot", "bot", common)
        for i in range(tables):
            table = self.add(f"table{i}", "table", {**common, "BOT_ADDR": bot.addr})
            table.env["ADVERTISE_ADDR"] = table.addr
            table.env["REPLICA_ID"] = f"replica-{i}"
        first_table = self.services["table0"]
        mm = self.add("matchmaker", "matchmaker", {**common, "TABLE_ADDR": first_table.addr})
        for i in range(gateways):
            self.add(
                "gateway" if gateways == 1 else f"gateway{i}",
                "gateway",
                {
                    **common,
                    "MATCHMAKER_ADDR": mm.addr,
                    "TABLE_ADDR": first_table.addr,
                    "METRICS_PORT": str(free_port()),
                },
            )

    @property
    def gateways(self) -> list[Service]:
        return [service for service in self.services.values() if service.name == "gateway"]

    def start(self, timeout: float = 60.0) -> None:
        for service in self.services.values():
            service.start()
            if service.name != "gateway":
                self.wait_grpc(service, timeout)
        for gateway in self.gateways:
            self.wait_http(gateway, "/readyz", timeout)

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
            name: f"http://127.0.0.1:{service.env['METRICS_PORT']}/metrics"
            for name, service in self.services.items()
            if service.name == "gateway"
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
