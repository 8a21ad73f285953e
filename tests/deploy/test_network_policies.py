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
# Destinations outside that anything might try: the web, PostgreSQL, the ports of managed
# Redis services (6379; 6380: Azure Cache for Redis over TLS; 10000: Azure Managed Redis,
# Redis Cloud and Enterprise), another cluster's services.
OUTSIDE_PORTS = (80, 443, 5432, 6379, 6380, 8000, 10000)
REDIS_PORTS = (6379, 6380, 10000)
WORKLOADS = ("Deployment", "StatefulSet", "Job")
INGRESS = "namespace ingress-nginx"  # the ingress controller's pods
MONITORING = "namespace monitoring"  # Prometheus, prometheus-adapter
NAMESPACES = {INGRESS: "ingress-nginx", MONITORING: "monitoring"}

DESIGNED = {
    # Only the ingress controller reaches the public port (so its X-Forwarded-For is the
    # one believed), and only monitoring the metrics port.
    (INGRESS, "gateway", 8000),
    # Every rackem pod's /metrics, on its port named `metrics`.
    (MONITORING, "gateway", 9100),
    (MONITORING, "table", 9100),
    (MONITORING, "matchmaker", 9100),
    (MONITORING, "bot", 9100),
    ("gateway", "matchmaker", 50051),
    ("gateway", "table", 50052),
    ("matchmaker", "table", 50052),
    ("table", "bot", 50053),
    # A seat's hint (ChooseMove) and a finished match's review (Review).
    ("gateway", "bot", 50053),
    ("table", "redis", 6379),
    ("matchmaker", "redis", 6379),
    # Redis may be a managed service outside the cluster (external-redis), on its ports.
    *((client, OUTSIDE, port) for client in ("table", "matchmaker") for port in REDIS_PORTS),
    # The archive: the tables read and write it, the migrate Job migrates it; PostgreSQL in
    # the cluster (dev) or a managed one outside it (prod).
    ("table", "postgres", 5432),
    ("migrate", "postgres", 5432),
    ("table", OUTSIDE, 5432),
    ("migrate", OUTSIDE, 5432),
    # Profiles (docs/profiles.md): the gateways read and write them there.
    ("gateway", "postgres", 5432),
    ("gateway", OUTSIDE, 5432),
}
SENTINEL = {
    # components/redis-sentinel adds: the clients ask the Sentinels for the primary; the
    # Sentinels watch Redis and one another; the Redis pods replicate from one another and
    # ask the Sentinels (and one another's role) at their start.
    ("table", "redis-sentinel", 26379),
    ("matchmaker", "redis-sentinel", 26379),
    ("redis", "redis-sentinel", 26379),
    ("redis-sentinel", "redis-sentinel", 26379),
    ("redis-sentinel", "redis", 6379),
    ("redis", "redis", 6379),
}


def selects(selector: Mapping[str, Any], labels: Labels) -> bool:
    assert set(selector) <= {"matchLabels", "matchExpressions"}, f"unknown: {selector}"
    wanted: Mapping[str, str] = selector.get("matchLabels", {})
    if not all(labels.get(key) == value for key, value in wanted.items()):
        return False
    for expression in selector.get("matchExpressions", []):
        key, operator = expression["key"], expression["operator"]
        values = expression.get("values", [])
        held = {
            "In": key in labels and labels[key] in values,
            "NotIn": key not in labels or labels[key] not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }
        if not held[operator]:
            return False
    return True


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
    assert ("matchmaker", "bot", 50053) in paths
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


def test_every_pod_may_ask_any_resolver_on_dns_s_ports(manifests: tuple[Manifest, ...]) -> None:
    """Names resolve whatever serves DNS to the pods: kube-dns or CoreDNS by any label,
    NodeLocal DNSCache (a link-local address on the node), OpenShift's DNS pods (5353
    behind the Service's 53): no selector on the destination, only the ports."""
    (dns,) = [
        m
        for m in manifests
        if m["kind"] == "NetworkPolicy" and m["metadata"]["name"] == "allow-dns"
    ]
    assert dns["spec"]["podSelector"] == {}
    (rule,) = dns["spec"]["egress"]
    assert "to" not in rule  # any address, any namespace, any labels
    ports = {(p["protocol"], p["port"]) for p in rule["ports"]}
    assert ports == {(protocol, port) for protocol in ("UDP", "TCP") for port in (53, 5353)}
    policies = [m for m in manifests if m["kind"] == "NetworkPolicy"]
    assert "k8s-app" not in str(policies)


def test_the_redis_ports_are_one_rule_to_patch(manifests: tuple[Manifest, ...]) -> None:
    """The managed Redis's port is the provider's: the ports are in one policy's one rule
    (docs/deploy.md says how to patch it), for the table replicas and the matchmakers."""
    (clients,) = [
        m
        for m in manifests
        if m["kind"] == "NetworkPolicy" and m["metadata"]["name"] == "redis-clients"
    ]
    (rule,) = clients["spec"]["egress"]
    assert sorted(p["port"] for p in rule["ports"]) == sorted(REDIS_PORTS)
    for name in ("table", "matchmaker"):
        assert selects(clients["spec"]["podSelector"], {"app.kubernetes.io/name": name})
    assert not selects(clients["spec"]["podSelector"], {"app.kubernetes.io/name": "gateway"})


def test_a_monitoring_namespace_reaches_every_metrics_port(
    manifests: tuple[Manifest, ...],
) -> None:
    """Prometheus in the namespace `monitoring` scrapes every rackem pod's port named
    `metrics`, and reaches nothing else of theirs."""
    paths = reachable(manifests)
    for workload in (m for m in manifests if m["kind"] == "Deployment"):
        (container,) = workload["spec"]["template"]["spec"]["containers"]
        named = {p["name"]: p["containerPort"] for p in container["ports"]}
        name = workload["metadata"]["name"]
        assert named["metrics"] == 9100
        assert {to for source, dest, to in paths if (source, dest) == (MONITORING, name)} == {9100}
