"""Every kustomize overlay builds, validates offline against the Kubernetes schemas, and
meets the deployment policy: limits, probes, non-root, read-only root filesystem."""

from __future__ import annotations

import copy
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from services.table.settings import TableSettings
from tests.deploy.kubectl import kubectl

Manifest = dict[str, Any]
Render = Callable[[str], tuple[Manifest, ...]]
KUBERNETES_VERSION = "1.30"  # the oldest release the manifests support (gRPC probes: 1.27)
SERVICES = {"gateway", "matchmaker", "table", "bot"}
GRPC_PORTS = {"matchmaker": 50051, "table": 50052, "bot": 50053}
WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"}


def by_kind(manifests: tuple[Manifest, ...], kind: str) -> dict[str, Manifest]:
    return {m["metadata"]["name"]: m for m in manifests if m["kind"] == kind}


def pod_spec(workload: Manifest) -> dict[str, Any]:
    spec = workload["spec"]
    if workload["kind"] == "CronJob":
        spec = spec["jobTemplate"]["spec"]
    pod: dict[str, Any] = spec["template"]["spec"]
    return pod


def containers(workload: Manifest) -> Iterator[dict[str, Any]]:
    pod = pod_spec(workload)
    yield from pod.get("initContainers", [])
    yield from pod["containers"]


def policy_problems(manifests: tuple[Manifest, ...]) -> list[str]:
    """What breaks the policy, one line per container and rule; empty when all is well."""
    problems = []
    for workload in (m for m in manifests if m["kind"] in WORKLOADS):
        pod = pod_spec(workload)
        pod_security = pod.get("securityContext", {})
        for container in containers(workload):
            where = f"{workload['kind']}/{workload['metadata']['name']}/{container['name']}"
            security = {**pod_security, **container.get("securityContext", {})}
            resources = container.get("resources", {})
            for bound in ("requests", "limits"):
                for resource in ("cpu", "memory"):
                    if resource not in resources.get(bound, {}):
                        problems.append(f"{where}: no {resource} in resources.{bound}")
            # Probes are for what serves: not an init container, nor a Job's run to its end.
            serves = container not in pod.get("initContainers", []) and workload["kind"] not in (
                "Job",
                "CronJob",
            )
            for probe in ("readinessProbe", "livenessProbe"):
                if serves and probe not in container:
                    problems.append(f"{where}: no {probe}")
            if security.get("runAsNonRoot") is not True:
                problems.append(f"{where}: runAsNonRoot is not true")
            if security.get("runAsUser") == 0:
                problems.append(f"{where}: runs as user 0")
            if container.get("securityContext", {}).get("readOnlyRootFilesystem") is not True:
                problems.append(f"{where}: root filesystem is writable")
            if container.get("securityContext", {}).get("allowPrivilegeEscalation") is not False:
                problems.append(f"{where}: privilege escalation is allowed")
            if "ALL" not in container.get("securityContext", {}).get("capabilities", {}).get(
                "drop", []
            ):
                problems.append(f"{where}: capabilities are not all dropped")
    return problems


def test_overlay_builds_every_service(manifests: tuple[Manifest, ...]) -> None:
    deployments = by_kind(manifests, "Deployment")
    assert set(deployments) >= SERVICES
    assert set(by_kind(manifests, "Service")) >= SERVICES
    assert set(by_kind(manifests, "ServiceAccount")) >= SERVICES
    assert set(by_kind(manifests, "ConfigMap")) >= SERVICES
    namespaces = {m["metadata"].get("namespace") for m in manifests if m["kind"] != "Namespace"}
    assert len(namespaces) == 1 and None not in namespaces


def test_every_object_validates_against_the_kubernetes_schemas(
    manifests: tuple[Manifest, ...],
) -> None:
    for manifest in manifests:
        kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True)


def test_schema_validation_rejects_an_unknown_field(manifests: tuple[Manifest, ...]) -> None:
    deployment = copy.deepcopy(by_kind(manifests, "Deployment")["table"])
    deployment["spec"]["template"]["spec"]["containers"][0]["livenesProbe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSION, strict=True)


def test_every_container_meets_the_policy(manifests: tuple[Manifest, ...]) -> None:
    assert policy_problems(manifests) == []


def test_policy_catches_a_container_without_limits_probes_or_lockdown(
    manifests: tuple[Manifest, ...],
) -> None:
    broken = copy.deepcopy(manifests)
    bot = next(m for m in broken if m["kind"] == "Deployment" and m["metadata"]["name"] == "bot")
    pod = pod_spec(bot)
    container = pod["containers"][0]
    del container["resources"]["limits"]
    del container["livenessProbe"]
    container["securityContext"]["readOnlyRootFilesystem"] = False
    pod["securityContext"]["runAsNonRoot"] = False
    assert sorted(policy_problems(broken)) == [
        "Deployment/bot/bot: no cpu in resources.limits",
        "Deployment/bot/bot: no livenessProbe",
        "Deployment/bot/bot: no memory in resources.limits",
        "Deployment/bot/bot: root filesystem is writable",
        "Deployment/bot/bot: runAsNonRoot is not true",
    ]


def test_grpc_services_have_grpc_probes_and_the_gateway_http_probes(
    manifests: tuple[Manifest, ...],
) -> None:
    deployments = by_kind(manifests, "Deployment")
    for name, port in GRPC_PORTS.items():
        container = pod_spec(deployments[name])["containers"][0]
        assert container["args"] == ["serve", name]
        assert container["readinessProbe"]["grpc"] == {"port": port}
        assert container["livenessProbe"]["grpc"]["port"] == port  # the table's: test_capacity
    gateway = pod_spec(deployments["gateway"])["containers"][0]
    assert gateway["args"] == ["serve", "gateway"]
    assert gateway["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert gateway["livenessProbe"]["httpGet"]["path"] == "/healthz"


def test_services_share_one_image_that_the_overlay_names(manifests: tuple[Manifest, ...]) -> None:
    deployments = by_kind(manifests, "Deployment")
    images = {pod_spec(deployments[name])["containers"][0]["image"] for name in SERVICES}
    assert len(images) == 1
    (image,) = images
    assert image != "rackem" and ":" in image


def test_table_replicas_advertise_their_pod_address(manifests: tuple[Manifest, ...]) -> None:
    table = pod_spec(by_kind(manifests, "Deployment")["table"])
    env = {var["name"]: var for var in table["containers"][0]["env"]}
    assert env["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    assert env["ADVERTISE_ADDR"]["value"] == "$(POD_IP):50052"
    names = list(env)
    assert names.index("POD_IP") < names.index("ADVERTISE_ADDR")  # $(VAR) sees earlier vars


def test_table_grace_outlasts_the_hand_over(manifests: tuple[Manifest, ...]) -> None:
    table = pod_spec(by_kind(manifests, "Deployment")["table"])
    settings = TableSettings()
    hand_over_s = (settings.stop_grace_ms + settings.lease_ms) / 1000
    grace = table["terminationGracePeriodSeconds"]
    assert grace >= 45 and grace > hand_over_s
    liveness = table["containers"][0]["livenessProbe"]
    assert liveness["periodSeconds"] * liveness["failureThreshold"] > grace


def test_ingress_routes_to_the_gateway_and_keeps_websockets_open(
    manifests: tuple[Manifest, ...],
) -> None:
    ingress = by_kind(manifests, "Ingress")["gateway"]
    annotations = ingress["metadata"]["annotations"]
    for timeout in ("proxy-read-timeout", "proxy-send-timeout"):
        assert int(annotations[f"nginx.ingress.kubernetes.io/{timeout}"]) >= 3600
    (rule,) = ingress["spec"]["rules"]
    (path,) = rule["http"]["paths"]
    assert path["backend"]["service"]["name"] == "gateway"
    service = by_kind(manifests, "Service")["gateway"]
    assert path["backend"]["service"]["port"]["name"] in {
        p["name"] for p in service["spec"]["ports"]
    }
    # /metrics has a port of its own, in the Service (for Prometheus) but never routed.
    assert path["backend"]["service"]["port"]["name"] == "http"
    ports = {p["name"]: p["targetPort"] for p in service["spec"]["ports"]}
    assert ports == {"http": "http", "metrics": "metrics"}
    container = pod_spec(by_kind(manifests, "Deployment")["gateway"])["containers"][0]
    named = {p["name"]: p["containerPort"] for p in container["ports"]}
    config = by_kind(manifests, "ConfigMap")["gateway"]["data"]
    assert named == {"http": int(config["PORT"]), "metrics": int(config["METRICS_PORT"])}


def _redis_url_from_the_secret(manifests: tuple[Manifest, ...]) -> None:
    for name in ("table", "matchmaker"):
        assert "REDIS_URL" not in by_kind(manifests, "ConfigMap")[name]["data"]
        container = pod_spec(by_kind(manifests, "Deployment")[name])["containers"][0]
        env = {var["name"]: var for var in container["env"]}
        secret = env["REDIS_URL"]["valueFrom"]["secretKeyRef"]
        assert secret == {"name": "rackem-redis", "key": "url"}


def test_dev_runs_a_durable_redis_behind_a_password_in_the_cluster(render: Render) -> None:
    manifests = render("dev")
    assert "redis" not in by_kind(manifests, "Deployment")
    redis = by_kind(manifests, "StatefulSet")["redis"]
    assert "redis" in by_kind(manifests, "Service")
    (claim,) = redis["spec"]["volumeClaimTemplates"]
    assert claim["metadata"]["name"] == "data"
    (container,) = pod_spec(redis)["containers"]
    assert {m["name"]: m["mountPath"] for m in container["volumeMounts"]}["data"] == "/data"
    config = by_kind(manifests, "ConfigMap")["redis"]["data"]["redis.conf"].splitlines()
    assert {"appendonly yes", "appendfsync everysec", "dir /data"} <= set(config)
    assert "maxmemory-policy noeviction" in config
    env = {var["name"]: var for var in container["env"]}
    password = env["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"]
    assert password == {"name": "rackem-redis", "key": "password"}
    assert '--requirepass "$REDIS_PASSWORD"' in container["args"][0]
    _redis_url_from_the_secret(manifests)


def test_prod_reads_redis_from_a_secret_and_runs_none(render: Render) -> None:
    manifests = render("prod")
    assert "redis" not in by_kind(manifests, "StatefulSet")
    assert "redis" not in by_kind(manifests, "Service")
    assert "redis" not in by_kind(manifests, "ConfigMap")
    _redis_url_from_the_secret(manifests)


def test_prod_autoscales_the_gateway_and_the_bot(render: Render) -> None:
    manifests = render("prod")
    autoscalers = by_kind(manifests, "HorizontalPodAutoscaler")
    targets = {hpa["spec"]["scaleTargetRef"]["name"] for hpa in autoscalers.values()}
    assert targets == {"gateway", "bot"}
    deployments = by_kind(manifests, "Deployment")
    for name in targets:
        assert "replicas" not in deployments[name]["spec"]  # the HPA owns the count
        assert autoscalers[name]["spec"]["minReplicas"] >= 2
    assert deployments["table"]["spec"]["replicas"] >= 2


def test_prod_has_a_disruption_budget_for_every_service(render: Render) -> None:
    manifests = render("prod")
    budgets = by_kind(manifests, "PodDisruptionBudget").values()
    covered = set()
    for name, deployment in by_kind(manifests, "Deployment").items():
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        for budget in budgets:
            selector = budget["spec"]["selector"]["matchLabels"]
            if selector.items() <= labels.items():
                covered.add(name)
    assert covered >= SERVICES


def test_prod_ingress_serves_the_public_host_over_tls(render: Render) -> None:
    ingress = by_kind(render("prod"), "Ingress")["gateway"]
    (rule,) = ingress["spec"]["rules"]
    (tls,) = ingress["spec"]["tls"]
    assert rule["host"] in tls["hosts"]
    gateway = by_kind(render("prod"), "ConfigMap")["gateway"]["data"]
    assert gateway["ALLOWED_ORIGINS"] == f"https://{rule['host']}"
    assert gateway["ALLOWED_HOSTS"] == rule["host"]  # no other Host name is answered


def _with_sentinel(tmp_path: Path) -> tuple[Manifest, ...]:
    """The base with network policies and the redis-sentinel component, as an operator's
    overlay would compose them."""
    k8s = Path(__file__).resolve().parents[2] / "k8s"
    up = os.path.relpath(k8s, tmp_path)
    (tmp_path / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        "namespace: rackem-ha\n"
        f"resources:\n  - {up}/base\n"
        f"components:\n  - {up}/components/network-policies\n"
        f"  - {up}/components/redis-sentinel\n"
    )
    done = subprocess.run(
        [kubectl(), "kustomize", str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return tuple(doc for doc in yaml.safe_load_all(done.stdout) if doc)


def test_the_sentinel_component_runs_a_primary_a_replica_and_three_sentinels(
    tmp_path: Path,
) -> None:
    manifests = _with_sentinel(tmp_path)
    for manifest in manifests:
        kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True)
    assert policy_problems(manifests) == []
    sets = by_kind(manifests, "StatefulSet")
    assert sets["redis"]["spec"]["replicas"] == 2
    assert sets["redis-sentinel"]["spec"]["replicas"] == 3
    assert pod_spec(sets["redis"])["containers"][0]["args"] == ["/scripts/redis.sh"]
    scripts = by_kind(manifests, "ConfigMap")["redis-sentinel"]["data"]
    assert "sentinel monitor rackem $primary 6379 2" in scripts["sentinel.sh"]
    assert "--replicaof" in scripts["redis.sh"] and "--masterauth" in scripts["redis.sh"]
    # A move counts once the replica has it; the URL (with the Sentinels) is the Secret's.
    assert by_kind(manifests, "ConfigMap")["table"]["data"]["REDIS_WAIT_REPLICAS"] == "1"
    _redis_url_from_the_secret(manifests)
    policies = by_kind(manifests, "NetworkPolicy")
    assert {"redis-sentinel", "redis-replication", "redis-sentinel-clients"} <= set(policies)


def test_the_archive_is_migrated_by_its_job_and_read_by_the_tables(
    manifests: tuple[Manifest, ...],
) -> None:
    """DATABASE_URL from the Secret, where the archive is used: the table replicas (which
    wait for the schema, never make it) and the migrate Job (which makes it)."""
    secret = {"name": "rackem-database", "key": "url"}
    users = set()
    for workload in (m for m in manifests if m["kind"] in WORKLOADS):
        for container in containers(workload):
            env = {var["name"]: var for var in container.get("env", [])}
            if "DATABASE_URL" in env:
                assert env["DATABASE_URL"]["valueFrom"]["secretKeyRef"] == secret
                users.add(f"{workload['kind']}/{workload['metadata']['name']}/{container['name']}")
    assert users == {
        "Deployment/table/wait-for-schema",
        "Deployment/table/table",
        "Job/migrate/migrate",
    }
    job = by_kind(manifests, "Job")["migrate"]
    (migrate,) = pod_spec(job)["containers"]
    assert migrate["args"][0] == "migrate" and "--check" not in migrate["args"]
    assert pod_spec(job)["restartPolicy"] == "OnFailure" and job["spec"]["backoffLimit"] >= 1
    (wait,) = pod_spec(by_kind(manifests, "Deployment")["table"])["initContainers"]
    assert wait["args"][:2] == ["migrate", "--check"] and "--wait" in wait["args"]
    assert (
        wait["image"]
        == migrate["image"]
        == pod_spec(by_kind(manifests, "Deployment")["table"])["containers"][0]["image"]
    )


def test_dev_runs_a_small_postgresql_for_the_archive(render: Render) -> None:
    manifests = render("dev")
    postgres = by_kind(manifests, "StatefulSet")["postgres"]
    (claim,) = postgres["spec"]["volumeClaimTemplates"]
    (container,) = pod_spec(postgres)["containers"]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert mounts["data"] == "/var/lib/postgresql/data"
    env = {var["name"]: var for var in container["env"]}
    assert env["PGDATA"]["value"].startswith(mounts["data"] + "/")  # not the volume's root
    password = env["POSTGRES_PASSWORD"]["valueFrom"]["secretKeyRef"]
    assert password == {"name": "rackem-database", "key": "password"}
    service = by_kind(manifests, "Service")["postgres"]
    assert [p["port"] for p in service["spec"]["ports"]] == [5432]
    assert claim["metadata"]["name"] == "data"


def test_prod_runs_no_postgresql_of_its_own(render: Render) -> None:
    manifests = render("prod")
    assert "postgres" not in by_kind(manifests, "StatefulSet")
    assert "postgres" not in by_kind(manifests, "Service")
    assert "migrate" in by_kind(manifests, "Job")
