"""The network policies allow exactly the designed paths, checked by evaluating them.

A small evaluator of Kubernetes NetworkPolicy semantics (podSelector and namespaceSelector
matchLabels, peers, ports, policy types) computes every allowed (source, destination,
port) among the pods of an overlay, the pods of the other namespaces that matter (the
ingress controller's, the monitoring one's) and "outside" (anything else: clients on
the internet, a managed Redis or PostgreSQL, any other pod of the cluster). The pods are
those of every Deployment, StatefulSet (Redis, the dev overlay's PostgreSQL) and Job (the
archive's migration).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

Manifest = dict[str, Any]
Labels = Mapping[str, str]
OUTSIDE = "outside"
OUTSIDE_PORTS = (80, 443, 5432, 6379, 8000)  # destinations outside that anything might try
WORKLOADS = ("Deployment", "StatefulSet", "Job")
INGRESS = "namespace ingress-nginx"  # the ingress controller's pods
MONITORING = "namespace monitoring"  # Prometheus, prometheus-adapter
NAMESPACES = {INGRESS: "ingress-nginx", MONITORING: "monitoring"}

DESIGNED = {
    # Only the ingress controller reaches the public port (so its X-Forwarded-For is the
    # one believed), and only monitoring the metrics port.
    (INGRESS, "gateway", 8000),
    (MONITORING, "gateway", 9100),
    (MONITORING, "table", 9101),  # the replicas' /metrics: the archive's backlog and health
    ("gateway", "matchmaker", 50051),
    ("gateway", "table", 50052),
    ("matchmaker", "table", 50052),
    ("table", "bot", 50053),
    ("table", "redis", 6379),
    ("matchmaker", "redis", 6379),
    # Redis may be a managed service outside the cluster (external-redis).
    ("table", OUTSIDE, 6379),
    ("matchmaker", OUTSIDE, 6379),
    # The archive: the tables read and write it, the migrate Job migrates it; PostgreSQL in
    # the cluster (dev) or a managed one outside it (prod).
    ("table", "postgres", 5432),
    ("migrate", "postgres", 5432),
    ("table", OUTSIDE, 5432),
    ("migrate", OUTSIDE, 5432),
}


def selects(selector: Mapping[str, Any], labels: Labels) -> bool:
    assert set(selector) <= {"matchLabels"}, f"evaluator knows matchLabels only: {selector}"
    wanted: Mapping[str, str] = selector.get("matchLabels", {})
    return all(labels.get(key) == value for key, value in wanted.items())


def peer_matches(peer: Mapping[str, Any], labels: Labels | None, namespace: str = "") -> bool:
    """Does a from/to peer match a pod of this namespace (``labels``), a pod of another
    ``namespace`` (its labels unknown: only a peer without a pod selector matches it), or
    outside (neither)?"""
    if "ipBlock" in peer:
        return labels is None and not namespace
    if namespace:
        name = {"kubernetes.io/metadata.name": namespace}
        return (
            "namespaceSelector" in peer
            and selects(peer["namespaceSelector"], name)
            and not peer.get("podSelector")
        )
    if labels is None:
        return False
    if "namespaceSelector" in peer and peer["namespaceSelector"] != {}:
        return False  # another namespace
    return selects(peer.get("podSelector", {}), labels)


def port_matches(rule: Mapping[str, Any], port: int, names: Mapping[int, str]) -> bool:
    if not rule.get("ports"):
        return True
    return any(
        entry.get("protocol", "TCP") == "TCP" and entry.get("port") in (None, port, names.get(port))
        for entry in rule["ports"]
    )


def allowed(
    policies: list[Manifest],
    direction: str,  # "Ingress": rules of `labels` pods about `peer`; "Egress" likewise
    labels: Labels,
    peer: Labels | None,
    port: int,
    names: Mapping[int, str],
    namespace: str = "",
) -> bool:
    applying = []
    for policy in policies:
        spec = policy["spec"]
        types = spec.get("policyTypes") or (
            ["Ingress", "Egress"] if "egress" in spec else ["Ingress"]
        )
        if direction in types and selects(spec["podSelector"], labels):
            applying.append(spec)
    if not applying:
        return True
    key, side = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
    return any(
        port_matches(rule, port, names)
        and (not rule.get(side) or any(peer_matches(p, peer, namespace) for p in rule[side]))
        for spec in applying
        for rule in spec.get(key, [])
    )


def reachable(manifests: tuple[Manifest, ...]) -> set[tuple[str, str, int]]:
    """Every (source, destination, port) that the policies let through."""
    policies = [m for m in manifests if m["kind"] == "NetworkPolicy"]
    pods: dict[str, Labels] = {}
    ports: dict[str, dict[int, str]] = {}
    for workload in (m for m in manifests if m["kind"] in WORKLOADS):
        name = workload["metadata"]["name"]
        template = workload["spec"]["template"]
        pods[name] = template["metadata"]["labels"]
        ports[name] = {
            p["containerPort"]: p.get("name", "")
            for c in template["spec"]["containers"]
            for p in c.get("ports", [])
        }
    ports[OUTSIDE] = dict.fromkeys(OUTSIDE_PORTS, "")
    paths = set()
    for source in [*pods, OUTSIDE, *NAMESPACES]:
        for destination in [*pods, OUTSIDE]:
            if destination == OUTSIDE and source in (OUTSIDE, *NAMESPACES):
                continue
            namespace = NAMESPACES.get(source, "")
            for port in ports[destination]:
                names = ports[destination]
                out = source in (OUTSIDE, *NAMESPACES) or allowed(
                    policies, "Egress", pods[source], pods.get(destination), port, names
                )
                into = destination == OUTSIDE or allowed(
                    policies, "Ingress", pods[destination], pods.get(source), port, names, namespace
                )
                if out and into:
                    paths.add((source, destination, port))
    return paths


def test_policies_allow_exactly_the_designed_paths(manifests: tuple[Manifest, ...]) -> None:
    pods = {m["metadata"]["name"] for m in manifests if m["kind"] in WORKLOADS}
    designed = {path for path in DESIGNED if {path[0], path[1]} <= pods | {OUTSIDE, *NAMESPACES}}
    assert reachable(manifests) == designed


def test_a_new_pod_without_its_own_policy_is_closed(manifests: tuple[Manifest, ...]) -> None:
    bot = next(m for m in manifests if m["kind"] == "Deployment" and m["metadata"]["name"] == "bot")
    extra = copy.deepcopy(bot)
    extra["metadata"]["name"] = "extra"
    extra["spec"]["template"]["metadata"]["labels"] = {"app.kubernetes.io/name": "extra"}
    paths = reachable((*manifests, extra))
    assert not [path for path in paths if "extra" in path]
    without_deny_all = tuple(m for m in (*manifests, extra) if m["metadata"]["name"] != "deny-all")
    assert (OUTSIDE, "extra", 50053) in reachable(without_deny_all)
    assert (INGRESS, "extra", 50053) in reachable(without_deny_all)


def test_without_policies_everything_is_reachable(manifests: tuple[Manifest, ...]) -> None:
    bare = tuple(m for m in manifests if m["kind"] != "NetworkPolicy")
    paths = reachable(bare)
    assert (OUTSIDE, "table", 50052) in paths
    assert (OUTSIDE, "gateway", 8000) in paths and (OUTSIDE, "gateway", 9100) in paths
    assert ("gateway", "bot", 50053) in paths
    assert reachable(manifests) < paths


def test_only_the_ingress_controller_may_reach_the_public_port(
    manifests: tuple[Manifest, ...],
) -> None:
    """No pod of the namespace nor anything outside it reaches gateway:8000 or :9100, so
    believing X-Forwarded-For from any peer (FORWARDED_ALLOW_IPS "*") believes the
    controller only; and the policies are the ones that set it."""
    paths = reachable(manifests)
    for port in (8000, 9100):
        sources = {
            source for source, destination, to in paths if (destination, to) == ("gateway", port)
        }
        assert sources == {INGRESS if port == 8000 else MONITORING}
    config = next(
        m for m in manifests if m["kind"] == "ConfigMap" and m["metadata"]["name"] == "gateway"
    )
    assert config["data"]["FORWARDED_ALLOW_IPS"] == "*"
    assert config["data"]["METRICS_PORT"] == "9100"
