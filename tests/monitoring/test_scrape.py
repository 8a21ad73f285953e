"""The dashboards and the rules against a real Prometheus scraping a system that plays.

The whole system runs as processes (tests/system/stack.py) on Redis as deployed, a primary
and a replica behind Sentinels, each service with its /metrics on a port of its own;
Debian's Prometheus scrapes them every second as the jobs the dashboards and rules name
(rackem-gateway, rackem-table, rackem-matchmaker, rackem-bot, and redis through Debian's
redis exporter, one per server) and evaluates monitoring/prometheus/rules every second.
After a few matches (docs/monitoring.md, "The live check"):

- every query of every dashboard panel, and every rule's expression, parses (Prometheus
  formats and evaluates it) and every metric it reads has series: the selector alone, as
  ``promql.Selector.presence`` reads it (an alert's whole expression is empty while it
  does not fire, so its selectors are what is checked); every label it groups by exists
  on one of its metrics; every rule evaluates without error and every recording rule
  records series;
- no label value of any series names a table, a room code, a player, a seat token or an
  address (``REDIS_ADDRESSES`` and Prometheus's own ``instance`` label aside), and
  /metrics is never on the gateway's public port.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from redis_engines import Engines, SentinelGroup

from rackem.client import Client, play_match
from tests.monitoring.prometheus import RULES, Exporter, Prometheus, QueryError
from tests.monitoring.promql import grouping_labels, selectors, substitute
from tests.system.raw_ws import RawWebSocket
from tests.system.stack import Stack

ROOT = Path(__file__).resolve().parents[2]
DASHBOARDS = sorted((ROOT / "monitoring" / "grafana" / "dashboards").glob("*.json"))
JOBS = ("rackem-gateway", "rackem-table", "rackem-matchmaker", "rackem-bot", "redis")
# Grafana's own variables, as a panel over the last hour would have them at 1 s scrapes.
BUILTINS = {
    "__rate_interval": "1m",
    "__interval": "15s",
    "__interval_ms": "15000",
    "__range": "1h",
    "__range_s": "3600",
}
# As tests/system/conftest.py: short clocks, bots that move at once, no admission refusals
# for a busy machine; and every service's /metrics on a port of its own (0: any free one).
SETTINGS = {
    "DECISION_MS": "2500",
    "BOT_DELAY_MS": "0",
    "CONTINUE_MS": "1000",
    "FILL_MS": "1500",
    "FILL_LONE_MS": "1500",
    "MSG_RATE": "200",
    "MSG_BURST": "400",
    "OVERLOAD_LAG_MS": "0",
    "OVERLOAD_ANSWER_MS": "0",
    "METRICS_PORT": "0",
}
# Labels whose values are addresses, and rightly so: Prometheus's own ``instance`` (the
# target), and the redis exporter's replication labels, which name Redis servers (the
# replica alerts say which one), never a player.
REDIS_ADDRESSES = {("redis", "slave_ip"), ("redis", "master_host")}
ADDRESS = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b|\[[0-9a-fA-F:]+\](?::\d+)?")


@dataclass
class Played:
    """What the matches made that no label may carry."""

    table_ids: set[str] = field(default_factory=set)
    codes: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)
    tokens: set[str] = field(default_factory=set)

    def seat(self, client: Client, name: str) -> None:
        self.names.add(name)
        for found, where in ((client.table_id, self.table_ids), (client.token, self.tokens)):
            if found:
                where.add(str(found))
        if client.code:
            self.codes.add(str(client.code))


@dataclass
class Monitored:
    stack: Stack
    prometheus: Prometheus
    played: Played


async def _play(url: str, port: int, played: Played) -> None:
    """A private table met by room code, a table with a bot, each played to its end, a
    lone quick-match player seated with a bot after the fill timer, who leaves, and a
    careless client or two (so that the error and drop counters have series)."""
    tag = secrets.token_hex(3)
    async with Client(url) as host, Client(url) as guest, Client(url) as solo:
        await host.create_table(f"Host-{tag}", rules={"players": 2, "target": 50})
        assert host.code is not None
        await guest.join(host.code.lower(), f"Guest-{tag}")
        await solo.create_table(
            f"Solo-{tag}", {"players": 2, "target": 50}, level="easy", start_now=True
        )
        played.seat(host, f"Host-{tag}")
        played.seat(guest, f"Guest-{tag}")
        played.seat(solo, f"Solo-{tag}")
        finals = await asyncio.gather(
            play_match(host, timeout=60),
            play_match(guest, timeout=60),
            play_match(solo, timeout=60),
        )
        assert [final["status"] for final in finals] == ["finished"] * 3
    async with Client(url) as lone:
        await lone.quick_match(f"Lone-{tag}", 2)
        played.seat(lone, f"Lone-{tag}")
        await lone.next_view(0, timeout=30)  # seated with a bot: the table started
        await lone.leave()
        # A careless client: a message the protocol has not (a protocol error) ...
        await lone.send({"type": "no_such_message"})
        await lone.wait_for("error")
    # ... and a text frame that is not UTF-8 (the gateway drops the connection).
    raw = await RawWebSocket.open(port)
    raw.send_text(b"\xff\xfe")
    await raw.flush()
    assert await raw.closed() is not None
    await raw.aclose()


def _wait_scraped(prometheus: Prometheus, timeout: float = 20.0) -> None:
    """Until every target has been scraped once (Prometheus hands its targets to the
    scrapers some seconds after it starts)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        targets = prometheus.targets()
        if len(targets) == sum(len(t) for t in prometheus.jobs.values()) and all(
            target["health"] != "unknown" for target in targets
        ):
            return
        time.sleep(0.2)


def _wait_rules_evaluated(prometheus: Prometheus, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(rule["health"] != "unknown" for rule in prometheus.rules_loaded()):
            return
        time.sleep(0.2)


@pytest.fixture(scope="module")
def monitored(
    redis_engines: Engines, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Monitored]:
    """The deployed shape: Redis as a primary and a replica behind Sentinels (so that the
    replication rules have their metrics), an exporter for each server."""
    workdir = tmp_path_factory.mktemp("monitored")
    group = redis_engines.get("sentinel")
    assert isinstance(group, SentinelGroup)
    group.flush()
    stack = Stack(workdir, group.url, SETTINGS)
    stack.build(tables=1)
    exporters = [
        Exporter(workdir / f"exporter{i}", "redis-exporter", health="/health")
        for i in range(len(group.servers))
    ]
    prometheus = Prometheus(workdir / "prometheus", "prometheus", rules=workdir / "rules")
    _copy_rules(prometheus.rules)
    try:
        stack.start()
        for exporter, server in zip(exporters, group.servers, strict=True):
            exporter.redis_addr, exporter.redis_password = server.addr, group.password
            exporter.start()
        # A service that reports no metrics port is left out here, and named by
        # test_every_service_is_scraped_on_a_metrics_port_of_its_own.
        for service in stack.services.values():
            if service.metrics_port:
                target = f"127.0.0.1:{service.metrics_port}"
                prometheus.jobs.setdefault(f"rackem-{service.name}", []).append(target)
        prometheus.jobs["redis"] = [f"127.0.0.1:{exporter.port}" for exporter in exporters]
        prometheus.start()
        _wait_scraped(prometheus)
        played = Played()
        asyncio.run(_play(stack.ws, stack.gateways[0].port, played))
        time.sleep(3)  # three scrapes and evaluations after the last move
        _wait_rules_evaluated(prometheus)
        yield Monitored(stack, prometheus, played)
    finally:
        prometheus.stop()
        for exporter in exporters:
            exporter.stop()
        stack.stop()


def _copy_rules(into: Path) -> None:
    """The repository's rules, each group evaluated at the global interval (1 s): a group's
    own ``interval`` (the 30-day budgets' 5 m) would leave it unevaluated in this test."""
    into.mkdir()
    for path in RULES.glob("*.yml"):
        rules = yaml.safe_load(path.read_text())
        for group in rules["groups"]:
            group.pop("interval", None)
        (into / path.name).write_text(yaml.safe_dump(rules, sort_keys=False))


# -- the checker -----------------------------------------------------------------------


@dataclass
class Checker:
    """Checks expressions against one Prometheus; each problem is one line."""

    prometheus: Prometheus
    _seen: dict[str, bool] = field(default_factory=dict)

    def _has_series(self, expr: str) -> bool:
        if expr not in self._seen:
            self._seen[expr] = bool(self.prometheus.query(expr))
        return self._seen[expr]

    def problems(self, expr: str, where: str) -> list[str]:
        try:
            canonical = self.prometheus.format(expr)
            self.prometheus.query(canonical)
        except QueryError as err:
            return [f"{where}: {err}\n    {expr}"]
        found = []
        metrics = set()
        for selector in selectors(canonical):
            metrics.add(selector.metric)
            if not self._has_series(selector.presence()):
                found.append(f"{where}: no series {selector.presence()}")
        names = "|".join(sorted(metrics))
        for label in sorted(set(grouping_labels(canonical))):
            if metrics and not self._has_series(f'count({{__name__=~"{names}", {label}!=""}})'):
                found.append(f"{where}: no metric of {sorted(metrics)} has the label {label!r}")
        return found


def _panels(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for panel in panels:
        yield panel
        yield from _panels(panel.get("panels", []))


def _variables(dashboard: dict[str, Any]) -> dict[str, str]:
    """Each variable's value for the check: the value of "All" for a query variable."""
    values = dict(BUILTINS)
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            values[variable["name"]] = variable["allValue"]
    return values


def dashboard_problems(checker: Checker, dashboard: dict[str, Any], name: str) -> list[str]:
    """Every query variable's selector and label, and every panel's queries."""
    values = _variables(dashboard)
    found = []
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            where = f"{name} ${variable['name']}"
            label_values = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", variable["definition"])
            if label_values is None:
                found.append(f"{where}: not label_values(SELECTOR, LABEL)")
                continue
            found += checker.problems(f"count by ({label_values[2]}) ({label_values[1]})", where)
    for panel in _panels(dashboard["panels"]):
        for target in panel.get("targets", []):
            where = f"{name} {panel['title']!r} {target['refId']}"
            try:
                expr = substitute(target["expr"], values)
            except KeyError as err:
                found.append(f"{where}: no value for the variable {err}")
                continue
            found += checker.problems(expr, where)
    return found


def _rules_in_files() -> list[dict[str, Any]]:
    rules = []
    for path in sorted(RULES.glob("*.yml")):
        for group in yaml.safe_load(path.read_text())["groups"]:
            rules += group["rules"]
    return rules


# -- the tests -------------------------------------------------------------------------


def test_every_service_is_scraped_on_a_metrics_port_of_its_own(monitored: Monitored) -> None:
    services = monitored.stack.services
    silent = [name for name, s in services.items() if not s.metrics_port]
    assert silent == [], "services that report no metrics_port"
    assert all(s.metrics_port != s.port for s in services.values())
    targets = monitored.prometheus.targets()
    down = [(t["labels"]["job"], t["lastError"]) for t in targets if t["health"] != "up"]
    assert down == []
    assert {t["labels"]["job"] for t in targets} == set(JOBS)


def test_metrics_are_not_served_on_the_public_port(monitored: Monitored) -> None:
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(monitored.stack.url + "/metrics", timeout=5)
    refused.value.close()
    assert refused.value.code == 404
    for url in monitored.stack.metrics_urls.values():
        with urllib.request.urlopen(url, timeout=5) as reply:
            assert b"rackem_gateway_connections" in reply.read()


@pytest.mark.parametrize("path", DASHBOARDS, ids=[path.stem for path in DASHBOARDS])
def test_every_dashboard_query_parses_and_reads_metrics_that_exist(
    monitored: Monitored, path: Path
) -> None:
    dashboard = json.loads(path.read_text())
    found = dashboard_problems(Checker(monitored.prometheus), dashboard, path.name)
    assert not found, "\n".join(found)


def test_every_rule_loads_evaluates_and_reads_metrics_that_exist(monitored: Monitored) -> None:
    prometheus = monitored.prometheus
    in_files = _rules_in_files()
    assert in_files, f"no rules in {RULES}"
    loaded = prometheus.rules_loaded()
    names = [rule.get("record") or rule.get("alert") for rule in in_files]
    assert sorted(names) == sorted(rule["name"] for rule in loaded)
    checker = Checker(prometheus)
    found = []
    for rule in loaded:
        where = f"{rule['type']} rule {rule['name']}"
        if rule["health"] != "ok":
            found.append(f"{where}: {rule['health']} {rule.get('lastError', '')}")
        found += checker.problems(rule["query"], where)
        if rule["type"] == "recording":
            matchers = "".join(f', {k}="{v}"' for k, v in rule.get("labels", {}).items())
            if not prometheus.query(f'{{__name__="{rule["name"]}"{matchers}}}'):
                found.append(f"{where}: recorded no series")
    assert not found, "\n".join(found)


def test_the_checker_finds_a_misspelt_metric_a_missing_label_and_a_parse_error(
    monitored: Monitored,
) -> None:
    checker = Checker(monitored.prometheus)
    assert checker.problems('sum by (instance) (rate(up{job="redis"}[1m]))', "good") == []
    misspelt = checker.problems(
        'sum(rate(rackem_gateway_movez_total{job="rackem-gateway"}[1m]))', "x"
    )
    assert misspelt == [
        'x: no series {__name__="rackem_gateway_movez_total", job="rackem-gateway"}'
    ]
    bad_value = checker.problems('up{job="rackem-gatway"}', "x")
    assert bad_value == ['x: no series {__name__="up", job="rackem-gatway"}']
    bad_label = checker.problems('sum by (jbo) (up{job=~"rackem-.+"})', "x")
    assert bad_label == ["x: no metric of ['up'] has the label 'jbo'"]
    (parse_error,) = checker.problems("sum(rate(up[1m])", "x")
    assert parse_error.startswith("x: bad_data: ")
    instance = {
        "name": "instance",
        "type": "query",
        "definition": 'label_values(up{job="redis"}, instance)',
        "allValue": ".*",
    }
    good = 'sum(rate(up{job="redis", instance=~"$instance"}[$__rate_interval]))'
    dashboard = {
        "templating": {"list": [instance, {**instance, "name": "i2", "definition": "up"}]},
        "panels": [
            {"title": "good", "targets": [{"refId": "A", "expr": good}]},
            {"title": "bogus", "targets": [{"refId": "B", "expr": "sum(rackem_no_such_metric)"}]},
            {"title": "unknown", "targets": [{"refId": "C", "expr": "sum(up{a=~'$nope'})"}]},
        ],
    }
    assert dashboard_problems(checker, dashboard, "d") == [
        "d $i2: not label_values(SELECTOR, LABEL)",
        "d 'bogus' B: no series {__name__=\"rackem_no_such_metric\"}",
        "d 'unknown' C: no value for the variable 'nope'",
    ]


def test_no_label_names_a_table_a_code_a_player_a_token_or_an_address(
    monitored: Monitored,
) -> None:
    played = monitored.played
    assert played.table_ids and played.codes and played.names and played.tokens
    secret_parts = played.table_ids | played.names | played.tokens
    codes = {code.lower() for code in played.codes}
    series = monitored.prometheus.series('{__name__=~".+"}')
    assert len(series) > 100
    found = set()
    for labels in series:
        for label, value in labels.items():
            if label == "instance" or (labels.get("job"), label) in REDIS_ADDRESSES:
                continue
            if (
                value.lower() in codes
                or any(part in value for part in secret_parts)
                or ADDRESS.search(value)
            ):
                found.add(f"{labels['__name__']}{{{label}={value!r}}}")
    assert sorted(found) == []
