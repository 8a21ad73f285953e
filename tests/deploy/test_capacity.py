"""k8s/ is sized from the measurements, and docs/capacity.md follows from them: both come
from scripts/capacity.py over the benchmarks' JSON in bench/results/."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from services.gateway.settings import GatewaySettings
from services.matchmaker.settings import MatchmakerSettings
from services.table.server import ALIVE
from services.table.settings import TableSettings
from tests.deploy.conftest import K8S, build, kustomize

ROOT = Path(__file__).resolve().parents[2]
Manifest = dict[str, Any]
Render = Callable[[str], tuple[Manifest, ...]]


def by_kind(manifests: tuple[Manifest, ...], kind: str) -> dict[str, Manifest]:
    return {m["metadata"]["name"]: m for m in manifests if m["kind"] == kind}


def pod_spec(workload: Manifest) -> dict[str, Any]:
    pod: dict[str, Any] = workload["spec"]["template"]["spec"]
    return pod


def _capacity() -> ModuleType:
    spec = importlib.util.spec_from_file_location("capacity", ROOT / "scripts" / "capacity.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["capacity"] = module
    spec.loader.exec_module(module)
    return module


capacity = _capacity()


def test_the_capacity_page_is_what_the_benchmarks_give() -> None:
    assert (ROOT / "docs" / "capacity.md").read_text() == capacity.render(capacity.measured())


def kustomize_base() -> tuple[Manifest, ...]:
    return kustomize(K8S / "base")


def _mi(quantity: str) -> int:
    return (
        int(quantity.removesuffix("Mi"))
        if quantity.endswith("Mi")
        else int(quantity.removesuffix("Gi")) * 1024
    )


def test_requests_and_the_connection_cap_follow_from_the_measurements(render: Render) -> None:
    size: dict[str, Any] = capacity.sizing()
    assert set(size) == {"gateway", "table", "bot", "matchmaker"}  # every service is sized
    for overlay in ("dev", "prod"):
        manifests = render(overlay)
        deployments = by_kind(manifests, "Deployment")
        config = by_kind(manifests, "ConfigMap")["gateway"]["data"]
        assert int(config["MAX_CONNECTIONS"]) == size["gateway"]["max_connections"]
        for service, want in size.items():
            resources = pod_spec(deployments[service])["containers"][0]["resources"]
            assert resources["requests"]["cpu"] == f"{want['cpu_request_m']}m", service
            # Limits well above the requests: a busy pod's tail is never throttled.
            assert float(resources["limits"]["cpu"]) == want["cpu_limit"] >= 2, service
        gateway = pod_spec(deployments["gateway"])["containers"][0]["resources"]
        assert _mi(gateway["requests"]["memory"]) == size["gateway"]["memory_request_mi"]
        assert _mi(gateway["limits"]["memory"]) == size["gateway"]["memory_limit_mi"]
    assert GatewaySettings().max_connections >= size["gateway"]["max_connections"]


def test_the_bot_and_matchmaker_requests_hold_what_they_used() -> None:
    """Their memory is not modelled: the request holds at least the load run's RSS."""
    results = json.loads((ROOT / "bench" / "results" / "load_processes.json").read_text())
    run = results["stack"]["server_rss_mb_by_process"]
    deployments = by_kind(kustomize_base(), "Deployment")
    for service in ("bot", "matchmaker"):
        requests = pod_spec(deployments[service])["containers"][0]["resources"]["requests"]
        assert _mi(requests["memory"]) >= max(run[service])


def test_prod_runs_the_pods_the_model_plans(render: Render) -> None:
    """docs/capacity.md, "The prod overlay": the tables and matchmakers as replicas, the
    gateways and bots as their autoscalers' ceilings, for ``prod_players``."""
    fleet = capacity.prod_fleet(capacity.measured())
    plan = capacity.plan(capacity.DESIGN["prod_players"], capacity.measured())["pods"]
    manifests = render("prod")
    deployments = by_kind(manifests, "Deployment")
    autoscalers = by_kind(manifests, "HorizontalPodAutoscaler")
    assert deployments["table"]["spec"]["replicas"] == fleet["table_replicas"] == plan["table"]
    assert deployments["matchmaker"]["spec"]["replicas"] == plan["matchmaker"]
    assert autoscalers["gateway"]["spec"]["maxReplicas"] == plan["gateway"]
    assert autoscalers["bot"]["spec"]["maxReplicas"] == plan["bot"]
    assert plan["table"] > 3 and plan["bot"] > 10  # what the review found: far below


def test_the_autoscalers_hold_each_pod_where_the_model_plans_it(render: Render) -> None:
    """The gateway at the CPU of ``hpa_connections`` players (70 % of a request that is
    MAX_CONNECTIONS players' CPU), the bot at its planned share of a core; CPU alone, so
    they scale down as well as up on any cluster."""
    size: dict[str, Any] = capacity.sizing()
    autoscalers = by_kind(render("prod"), "HorizontalPodAutoscaler")
    (gateway,) = autoscalers["gateway"]["spec"]["metrics"]
    assert gateway["resource"]["name"] == "cpu"
    assert gateway["resource"]["target"] == {
        "type": "Utilization",
        "averageUtilization": size["gateway"]["hpa_cpu_utilization"],
    }
    connections_cpu = size["gateway"]["hpa_connections"] / size["gateway"]["max_connections"]
    assert round(100 * connections_cpu) == size["gateway"]["hpa_cpu_utilization"]
    (bot,) = autoscalers["bot"]["spec"]["metrics"]
    assert bot["resource"]["target"] == {
        "type": "AverageValue",
        "averageValue": f"{size['bot']['hpa_cpu_m']}m",
    }


def test_the_connections_metric_is_the_model_s_per_pod_figure(tmp_path: Path) -> None:
    size: dict[str, Any] = capacity.sizing()
    component = ROOT / "k8s" / "components" / "hpa-connections"
    manifests = build(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        "resources:\n  - K8S/base\n"
        "components:\n  - K8S/components/hpa\n  - K8S/components/hpa-connections\n",
        tmp_path,
    )
    hpa = by_kind(manifests, "HorizontalPodAutoscaler")["gateway"]
    metrics = {m["type"]: m for m in hpa["spec"]["metrics"]}
    pods = metrics["Pods"]["pods"]
    assert pods["metric"]["name"] == "rackem_gateway_connections"  # services/gateway/metrics.py
    assert pods["target"] == {
        "type": "AverageValue",
        "averageValue": str(size["gateway"]["hpa_connections"]),
    }
    assert metrics["Resource"]["resource"]["name"] == "cpu"
    adapter = (component / "prometheus-adapter-values.yaml").read_text()
    assert "rackem_gateway_connections" in adapter


def test_table_replicas_spread_over_nodes_and_zones(render: Render) -> None:
    for overlay in ("dev", "prod"):
        table = pod_spec(by_kind(render(overlay), "Deployment")["table"])
        spread = {c["topologyKey"]: c for c in table["topologySpreadConstraints"]}
        assert set(spread) == {"kubernetes.io/hostname", "topology.kubernetes.io/zone"}
        for constraint in spread.values():
            assert constraint["maxSkew"] == 1
            assert constraint["labelSelector"]["matchLabels"] == {"app.kubernetes.io/name": "table"}


def test_a_gateway_leaves_the_endpoints_before_it_closes(render: Render) -> None:
    for overlay in ("dev", "prod"):
        pod = pod_spec(by_kind(render(overlay), "Deployment")["gateway"])
        container = pod["containers"][0]
        command = container["lifecycle"]["preStop"]["exec"]["command"]
        assert command[0] == "sleep" and int(command[1]) >= 5
        pause = int(command[1])
        closing = GatewaySettings().shutdown_grace_s + GatewaySettings().close_grace_ms / 1000
        assert pod["terminationGracePeriodSeconds"] > pause + closing


def test_a_table_replica_is_restarted_for_being_dead_not_for_waiting_on_redis(
    render: Render,
) -> None:
    for overlay in ("dev", "prod"):
        container = pod_spec(by_kind(render(overlay), "Deployment")["table"])["containers"][0]
        assert container["livenessProbe"]["grpc"] == {"port": 50052, "service": ALIVE}
        assert container["readinessProbe"]["grpc"] == {"port": 50052}


def test_the_prod_overlay_sets_the_lease_index_shards_the_model_gives(render: Render) -> None:
    measured = capacity.measured()
    want = capacity.lease_index_setting(measured)
    prod = by_kind(render("prod"), "ConfigMap")["table"]["data"]
    assert int(prod["LEASE_INDEX_SHARDS"]) == want
    # The largest design point's: enough for every size the page plans for.
    assert all(
        capacity.plan(players, measured)["lease_index_shards"] <= want
        for players in capacity.DESIGN["players"]
    )
    # The sweep's cost at that setting is what the page states for the overlay's fleet.
    table = by_kind(render("prod"), "Deployment")["table"]
    assert table["spec"]["replicas"] == capacity.prod_fleet(measured)["table_replicas"]
    # Without the setting a replica runs one shard (the dev overlay's size).
    assert "LEASE_INDEX_SHARDS" not in by_kind(render("dev"), "ConfigMap")["table"]["data"]
    assert TableSettings().lease_index_shards == 1


def test_redis_is_sized_by_the_larger_of_its_cpu_and_its_memory() -> None:
    measured = capacity.measured()
    for players in capacity.DESIGN["players"]:
        plan = capacity.plan(players, measured)
        memory = plan["memory"]
        usable = capacity.DESIGN["redis_maxmemory_gib"] * capacity.DESIGN["redis_memory_fill"]
        assert plan["redis_shards"] == max(plan["redis_shards_by_cpu"], memory["primaries"])
        assert memory["primaries"] * usable >= memory["total"]
        assert (memory["primaries"] - 1) * usable < memory["total"] or memory["primaries"] == 1
        # Sized so, Redis outlasts an archive outage of the design point before its alert.
        hours = capacity.DESIGN["archive_outage_s"] / 3600
        assert plan["outage_h"]["alert"] >= hours
        assert plan["outage_h"]["full"] > plan["outage_h"]["alert"]


def test_the_memory_model_holds_what_the_services_keep_as_long_as_they_keep_it() -> None:
    matchmaker = MatchmakerSettings()
    kept_s = max(matchmaker.done_ttl_ms, matchmaker.token_ttl_ms) / 1000
    assert capacity.DESIGN["matchmaker_ttl_s"] == kept_s
    assert capacity.DESIGN["sweep_s"] == TableSettings().sweep_ms / 1000
    assert capacity.DESIGN["finished_ttl_s"] == TableSettings().finished_ttl_ms / 1000
