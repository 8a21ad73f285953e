"""Debian's Prometheus and redis exporter as processes on loopback, for the live check.

``Exporter`` is ``prometheus-redis-exporter`` in front of one Redis; ``Prometheus`` scrapes
the targets it is given every second with rules (by default the repository's,
monitoring/prometheus/rules/*.yml) evaluated every second, on a TSDB in a temporary
directory, and answers queries through its HTTP API (``query``, ``format``, ``series``,
``rules``). Neither can be asked which port it bound, so a free one is picked (bind and
release) and the start is tried again on another if the process exits on it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from redis_engines import free_port

__all__ = ["RULES", "Exporter", "Prometheus", "QueryError"]

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "monitoring" / "prometheus" / "rules"
START_TIMEOUT_S = 20.0
TRIES = 3  # starts on another port when the one picked was taken meanwhile


class QueryError(RuntimeError):
    """Prometheus answered a query with an error (a parse error, for one)."""


def _binary(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} is not installed (scripts/setup installs it with apt)")
    return found


def _get(url: str, timeout: float = 5.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as reply:
        body: bytes = reply.read()
        return body


@dataclass
class _Process:
    """A server on a loopback port that answers ``health`` once it serves."""

    workdir: Path
    name: str
    health: str = "/"
    port: int = 0
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.workdir / f"{self.name}.log"

    def _command(self) -> list[str]:
        raise NotImplementedError

    def _env(self) -> Mapping[str, str]:
        return os.environ

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        for attempt in range(TRIES):
            self.port = free_port()
            with self.log.open("ab") as out:
                self.process = subprocess.Popen(
                    self._command(),
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=dict(self._env()),
                    cwd=self.workdir,
                )
            if self._wait_serving(last=attempt == TRIES - 1):
                return

    def _wait_serving(self, last: bool) -> bool:
        """True once it answers; False if it exited (its port taken?) and may be retried."""
        assert self.process is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                if last:
                    raise RuntimeError(f"{self.name} exited:\n{self.log.read_text()[-3000:]}")
                return False
            try:
                _get(self.url + self.health, timeout=1)
                return True
            except (OSError, urllib.error.URLError):
                time.sleep(0.1)
        self.stop()
        raise TimeoutError(f"{self.name} did not serve within {START_TIMEOUT_S} s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


@dataclass
class Exporter(_Process):
    """``prometheus-redis-exporter`` for the Redis at ``redis_addr`` (``host:port``)."""

    redis_addr: str = ""
    redis_password: str = ""

    def _command(self) -> list[str]:
        return [
            _binary("prometheus-redis-exporter"),
            f"--redis.addr=redis://{self.redis_addr}",
            f"--web.listen-address=127.0.0.1:{self.port}",
        ]

    def _env(self) -> Mapping[str, str]:
        # The password from the environment, as the exporter reads it, not argv.
        return {**os.environ, "REDIS_PASSWORD": self.redis_password}


@dataclass
class Prometheus(_Process):
    """Prometheus scraping ``jobs`` (job name -> ``host:port`` targets) every second."""

    health: str = "/-/ready"
    jobs: dict[str, list[str]] = field(default_factory=dict)
    rules: Path = RULES
    namespace: str = "rackem"

    def config(self) -> dict[str, Any]:
        # Every target in one namespace, as the PodMonitors' targets are in Kubernetes
        # (the rules aggregate by it).
        labels = {"namespace": self.namespace}
        return {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(self.rules / "*.yml")],
            "scrape_configs": [
                {"job_name": job, "static_configs": [{"targets": targets, "labels": labels}]}
                for job, targets in self.jobs.items()
            ],
        }

    def _command(self) -> list[str]:
        config = self.workdir / "prometheus.yml"
        config.write_text(yaml.safe_dump(self.config()))
        return [
            _binary("prometheus"),
            f"--config.file={config}",
            f"--storage.tsdb.path={self.workdir / 'data'}",
            f"--web.listen-address=127.0.0.1:{self.port}",
        ]

    def _api(self, path: str, params: list[tuple[str, str]], post: bool = True) -> Any:
        encoded = urllib.parse.urlencode(params)
        if post:
            request = urllib.request.Request(self.url + path, data=encoded.encode())
        else:
            request = urllib.request.Request(f"{self.url}{path}?{encoded}")
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                answer = json.loads(reply.read())
        except urllib.error.HTTPError as err:
            with err:
                answer = json.loads(err.read())
        if answer.get("status") != "success":
            raise QueryError(f"{answer.get('errorType')}: {answer.get('error')}")
        return answer["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """An instant query's result (a vector's samples; a scalar as one sample)."""
        data = self._api("/api/v1/query", [("query", expr)])
        if data["resultType"] in ("scalar", "string"):
            return [{"metric": {}, "value": data["result"]}]
        result: list[dict[str, Any]] = data["result"]
        return result

    def format(self, expr: str) -> str:
        """``expr`` as Prometheus prints it once parsed (``QueryError`` if it does not parse)."""
        formatted: str = self._api("/api/v1/format_query", [("query", expr)])
        return formatted

    def series(self, match: str) -> list[dict[str, str]]:
        """The label sets of every series ``match`` selects in the last hour."""
        start = str(time.time() - 3600)
        found: list[dict[str, str]] = self._api(
            "/api/v1/series", [("match[]", match), ("start", start)]
        )
        return found

    def rules_loaded(self) -> list[dict[str, Any]]:
        """Every rule Prometheus loaded, with its ``health`` and ``lastError``."""
        groups = self._api("/api/v1/rules", [], post=False)["groups"]
        return [rule for group in groups for rule in group["rules"]]

    def targets(self) -> list[dict[str, Any]]:
        """Every scrape target, with its ``health`` and ``lastError``."""
        found: list[dict[str, Any]] = self._api("/api/v1/targets", [], post=False)["activeTargets"]
        return found
