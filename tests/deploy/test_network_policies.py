"""The network policies allow exactly the designed paths, checked by evaluating them.

A small evaluator of Kubernetes NetworkPolicy semantics (podSelector matchLabels, peers,
ports, policy types) computes every allowed (source, destination, port) among the pods of
an overlay and "outside" (anything not in the namespace: clients, a managed Redis).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

Manifest = dict[str, Any]
Labels = Mapping[str, str]
OUTSIDE = "outside"
OUTSIDE_PORTS = (80, 443, 6379, 8000)  # destinations outside that anything might try

DESIGNED = {
    (OUTSIDE, "gateway", 8000),
    ("gateway", "matchmaker", 50051),
    ("gateway", "table", 50052),
    ("matchmaker", "table", 50052),
    ("table", "bot", 50053),
    ("table", "redis", 6379),
    ("matchmaker", "redis", 6379),
    # Redis may be a managed service outside the cluster (external-redis).
    ("table", OUTSIDE, 6379),
    ("matchmaker", OUTSIDE, 6379),
}


def selects(selector: Mapping[str, Any], labels: Labels) -> bool:
    assert set(selector) <= {"matchLabels"}, f"evaluator knows matchLabels only: {selector}"
    wanted: Mapping[str, str] = selector.get("matchLabels", {})
    return all(labels.get(key) == value for key, value in wanted.items())


def peer_matches(peer: Mapping[str, Any], labels: Labels | None) -> bool:
    """Does a from/to peer match a pod of this namespace (``labels``) or outside (None)?"""
    if "ipBlock" in peer:
        return labels is None
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
        and (not rule.get(side) or any(peer_matches(p, peer) for p in rule[side]))
        for spec in applying
        for rule in spec.get(key, [])
    )


def reachable(manifests: tuple[Manifest, ...]) -> set[tuple[str, str, int]]:
    """Every (source, destination, port) that the policies let through."""
    policies = [m for m in manifests if m["kind"] == "NetworkPolicy"]
    pods: dict[str, Labels] = {}
    ports: dict[str, dict[int, str]] = {}
    for deployment in (m for m in manifests if m["kind"] == "Deployment"):
        name = deployment["metadata"]["name"]
        template = deployment["spec"]["template"]
        pods[name] = template["metadata"]["labels"]
        ports[name] = {
            p["containerPort"]: p.get("name", "")
            for c in template["spec"]["containers"]
            for p in c.get("ports", [])
        }
    ports[OUTSIDE] = dict.fromkeys(OUTSIDE_PORTS, "")
    paths = set()
    for source in [*pods, OUTSIDE]:
        for destination in [*pods, OUTSIDE]:
            if OUTSIDE == source == destination:
                continue
            for port in ports[destination]:
                names = ports[destination]
                out = source == OUTSIDE or allowed(
                    policies, "Egress", pods[source], pods.get(destination), port, names
                )
                into = destination == OUTSIDE or allowed(
                    policies, "Ingress", pods[destination], pods.get(source), port, names
                )
                if out and into:
                    paths.add((source, destination, port))
    return paths


def test_policies_allow_exactly_the_designed_paths(manifests: tuple[Manifest, ...]) -> None:
    pods = {m["metadata"]["name"] for m in manifests if m["kind"] == "Deployment"}
    designed = {path for path in DESIGNED if {path[0], path[1]} <= pods | {OUTSIDE}}
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


def test_without_policies_everything_is_reachable(manifests: tuple[Manifest, ...]) -> None:
    bare = tuple(m for m in manifests if m["kind"] != "NetworkPolicy")
    paths = reachable(bare)
    assert (OUTSIDE, "table", 50052) in paths
    assert ("gateway", "bot", 50053) in paths
    assert reachable(manifests) < paths
