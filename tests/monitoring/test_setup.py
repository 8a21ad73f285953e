"""The monitoring setup around the live check (test_scrape.py): compose's Prometheus scrapes
every service on its metrics port, and k8s/components/monitoring renders, added to the
base as an operator's overlay would, into PodMonitors that find every pod's metrics port,
a redis exporter beside each Redis server, the rules, and the dashboards for Grafana's
sidecar. (The overlays in k8s/overlays do not list the component: the operator's CRDs,
PodMonitor and PrometheusRule, are not in the Kubernetes schemas tests/deploy validates
every overlay's objects against.)"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import yaml

from tests.deploy.kubectl import kubectl
from tests.deploy.test_kustomize import KUBERNETES_VERSION, pod_spec, policy_problems
from tests.deploy.test_network_policies import MONITORING, reachable

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "k8s"
DASHBOARDS = ROOT / "monitoring" / "grafana" / "dashboards"
SERVICES = ("gateway", "table", "matchmaker", "bot")
JOBS = {f"rackem-{name}" for name in SERVICES} | {"redis"}
OPERATOR_KINDS = {"PodMonitor", "PrometheusRule"}

Manifest = dict[str, Any]


def _render(tmp_path: Path, *components: str) -> list[Manifest]:
    up = os.path.relpath(K8S, tmp_path)
    listed = "".join(f"  - {up}/components/{name}\n" for name in components)
    (tmp_path / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        f"namespace: rackem-mon\nresources:\n  - {up}/base\ncomponents:\n{listed}"
    )
    done = subprocess.run(
        [kubectl(), "kustomize", str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def _named(manifests: list[Manifest], kind: str) -> dict[str, Manifest]:
    return {m["metadata"]["name"]: m for m in manifests if m["kind"] == kind}


def _selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    if not selector.get("matchLabels", {}).items() <= labels.items():
        return False
    for expression in selector.get("matchExpressions", []):
        assert expression["operator"] == "In"
        if labels.get(expression["key"]) not in expression["values"]:
            return False
    return True


def _job(endpoint: dict[str, Any], labels: dict[str, str]) -> str:
    """The job a PodMonitor endpoint's relabelling gives a pod with ``labels`` (Prometheus
    names a pod label ``__meta_kubernetes_pod_label_`` and the label, non-word characters
    made ``_``)."""
    (relabel,) = [r for r in endpoint["relabelings"] if r["targetLabel"] == "job"]
    meta = {"__meta_kubernetes_pod_label_" + re.sub(r"\W", "_", k): v for k, v in labels.items()}
    values = ";".join(meta[source] for source in relabel.get("sourceLabels", []))
    return str(relabel["replacement"]).replace("$1", values)


def test_compose_prometheus_scrapes_every_service_on_its_metrics_port() -> None:
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    config = yaml.safe_load((ROOT / "monitoring" / "prometheus" / "prometheus.yml").read_text())
    jobs = {
        job["job_name"]: {t for c in job["static_configs"] for t in c["targets"]}
        for job in config["scrape_configs"]
    }
    assert set(jobs) == JOBS
    assert config["rule_files"] == ["/etc/prometheus/rules/*.yml"]
    for name, service in compose["services"].items():
        if service.get("command", [None])[0] == "serve":
            port = service["environment"]["METRICS_PORT"]
            job = f"rackem-{service['command'][1]}"
            assert f"{name}:{port}" in jobs[job], f"{name} is not scraped as {job}"
            assert "ports" not in service or name == "gateway"
    gateway_ports = {str(p).split(":")[-1] for p in compose["services"]["gateway"]["ports"]}
    assert compose["services"]["gateway"]["environment"]["METRICS_PORT"] not in gateway_ports
    assert jobs["redis"] == {"redis-exporter:9121"}
    monitoring = {
        n for n, s in compose["services"].items() if "monitoring" in s.get("profiles", [])
    }
    assert monitoring == {"prometheus", "grafana", "redis-exporter"}


def test_compose_prometheus_configuration_is_valid(tmp_path: Path) -> None:
    """``promtool check config``, with the rules where compose mounts them."""
    prometheus = ROOT / "monitoring" / "prometheus"
    text = (prometheus / "prometheus.yml").read_text()
    (tmp_path / "prometheus.yml").write_text(
        text.replace("/etc/prometheus/rules/", f"{prometheus / 'rules'}/")
    )
    checked = subprocess.run(
        ["promtool", "check", "config", str(tmp_path / "prometheus.yml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert re.search(r"SUCCESS: [1-9]\d* rule files found", checked.stdout), checked.stdout


def test_the_component_scrapes_every_pod_on_its_metrics_port(tmp_path: Path) -> None:
    manifests = _render(tmp_path, "network-policies", "monitoring")
    monitors = _named(manifests, "PodMonitor")
    workloads = {**_named(manifests, "Deployment"), **_named(manifests, "StatefulSet")}
    jobs = set()
    for name, workload in workloads.items():
        labels = workload["spec"]["template"]["metadata"]["labels"]
        ports = {p["name"] for c in pod_spec(workload)["containers"] for p in c.get("ports", [])}
        selected = [m for m in monitors.values() if _selects(m["spec"]["selector"], labels)]
        if name in (*SERVICES, "redis"):
            (monitor,) = selected
            (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
            assert endpoint["port"] in ports, f"{name} has no port {endpoint['port']}"
            jobs.add(_job(endpoint, labels))
        else:
            assert selected == [], name
    assert jobs == JOBS  # the jobs compose's Prometheus, the dashboards and the rules name
    # ... and the network policies let the monitoring namespace reach each of those ports
    # (the exporter's too), and nothing else reach them.
    paths = reachable(tuple(manifests))
    scraped = {(d, port) for s, d, port in paths if port in (9100, 9121)}
    assert scraped == {*((name, 9100) for name in SERVICES), ("redis", 9121)}
    assert {s for s, _d, port in paths if port in (9100, 9121)} == {MONITORING}


def test_the_component_adds_a_locked_down_exporter_to_each_redis_server(tmp_path: Path) -> None:
    manifests = _render(tmp_path, "network-policies", "redis-sentinel", "monitoring")
    redis = _named(manifests, "StatefulSet")["redis"]
    assert redis["spec"]["replicas"] >= 2  # a primary and replicas: an exporter each
    containers = pod_spec(redis)["containers"]
    assert [c["name"] for c in containers] == ["redis", "redis-exporter"]
    exporter = containers[1]
    env = {var["name"]: var for var in exporter["env"]}
    assert env["REDIS_ADDR"]["value"] == "redis://127.0.0.1:6379"
    password = env["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"]
    assert password == {"name": "rackem-redis", "key": "password"}
    assert [(p["name"], p["containerPort"]) for p in exporter["ports"]] == [("redis-metrics", 9121)]
    assert policy_problems(tuple(manifests)) == []
    for manifest in manifests:
        if manifest["kind"] not in OPERATOR_KINDS:
            kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True)


def test_the_component_adds_nothing_to_a_redis_outside_the_cluster(tmp_path: Path) -> None:
    manifests = _render(tmp_path, "external-redis", "monitoring")
    assert "redis" not in _named(manifests, "StatefulSet")
    workloads = [m for m in manifests if "template" in m.get("spec", {})]
    assert "redis-exporter" not in {c["name"] for m in workloads for c in pod_spec(m)["containers"]}


def test_the_component_carries_the_rules_and_every_dashboard_for_the_sidecar(
    tmp_path: Path,
) -> None:
    manifests = _render(tmp_path, "monitoring")
    # (scripts/prometheus-rule.py makes it from monitoring/prometheus/rules: its own tests)
    assert set(_named(manifests, "PrometheusRule")) == {"rackem"}
    dashboards = {}
    for config_map in _named(manifests, "ConfigMap").values():
        if config_map["metadata"].get("labels", {}).get("grafana_dashboard") == "1":
            assert config_map["metadata"]["annotations"]["grafana_folder"] == "rackem"
            # kubectl apply keeps a copy of each object in an annotation of at most 256 KiB.
            assert len(json.dumps(config_map)) < 200_000, config_map["metadata"]["name"]
            dashboards.update(config_map["data"])
    files = {path.name: path.read_text() for path in DASHBOARDS.glob("*.json")}
    assert dashboards == files


def test_dashboards_are_provisionable() -> None:
    """One uid each, the ``datasource`` variable on every panel, known panel types."""
    paths = sorted(DASHBOARDS.glob("*.json"))
    assert {path.stem for path in paths} == {"overview", *SERVICES, "redis"}
    for path in paths:
        dashboard = json.loads(path.read_text())
        assert dashboard["uid"] == f"rackem-{path.stem}"
        assert dashboard["title"] == f"rackem / {path.stem}"
        assert dashboard["schemaVersion"] >= 39 and "rackem" in dashboard["tags"]
        variables = {v["name"]: v for v in dashboard["templating"]["list"]}
        assert variables["datasource"]["type"] == "datasource"
        assert variables["datasource"]["query"] == "prometheus"
        for panel in _panels(dashboard["panels"]):
            assert panel["type"] in {"row", "timeseries", "stat", "gauge"}, panel["title"]
            if panel["type"] != "row":
                assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
                assert panel["targets"], panel["title"]
                for target in panel["targets"]:
                    assert target["datasource"]["uid"] == "${datasource}", panel["title"]


def _panels(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for panel in panels:
        yield panel
        yield from _panels(panel.get("panels", []))
