"""Every kustomize overlay builds, validates offline against the Kubernetes schemas, and
meets the deployment policy: limits, probes, non-root, read-only root filesystem."""

from __future__ import annotations

import copy
import os
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from services.table.settings import TableSettings
from tests.deploy.conftest import K8S, build, kustomize
from tests.deploy.kubectl import kubectl

Manifest = dict[str, Any]
Render = Callable[[str], tuple[Manifest, ...]]
KUBERNETES_VERSION = "1.30"  # the oldest release the manifests support (gRPC probes: 1.27)
SERVICES = {"gateway", "matchmaker", "table", "bot"}
GRPC_PORTS = {"matchmaker": 50051, "table": 50052, "bot": 50053}
WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"}
ROOT = Path(__file__).resolve().parents[2]


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


def redis_url_from_the_secret(manifests: tuple[Manifest, ...]) -> None:
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
    redis_url_from_the_secret(manifests)


def test_prod_reads_redis_from_a_secret_and_runs_none(render: Render) -> None:
    manifests = render("prod")
    assert "redis" not in by_kind(manifests, "StatefulSet")
    assert "redis" not in by_kind(manifests, "Service")
    assert "redis" not in by_kind(manifests, "ConfigMap")
    redis_url_from_the_secret(manifests)


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


def test_the_archive_is_migrated_by_its_job_and_read_by_the_tables(
    manifests: tuple[Manifest, ...],
) -> None:
    """DATABASE_URL from the Secret, where the archive is used: the table replicas and the
    gateways (profiles), which wait for the schema and never make it, and the migrate Job
    (which makes it)."""
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
        "Deployment/gateway/wait-for-schema",
        "Deployment/gateway/gateway",
        "Job/migrate/migrate",
    }
    job = by_kind(manifests, "Job")["migrate"]
    (migrate,) = pod_spec(job)["containers"]
    assert migrate["args"][0] == "migrate" and "--check" not in migrate["args"]
    assert pod_spec(job)["restartPolicy"] == "OnFailure" and job["spec"]["backoffLimit"] >= 1
    for name in ("table", "gateway"):
        (wait,) = pod_spec(by_kind(manifests, "Deployment")[name])["initContainers"]
        assert wait["args"][:2] == ["migrate", "--check"] and "--wait" in wait["args"]
        assert (
            wait["image"]
            == migrate["image"]
            == pod_spec(by_kind(manifests, "Deployment")[name])["containers"][0]["image"]
        )


def test_the_daily_racks_secret_reaches_the_table_replicas_alone(
    manifests: tuple[Manifest, ...],
) -> None:
    """DAILY_SECRET (docs/daily.md) from the Secret `rackem-daily`, in the table replicas
    and nowhere else: every day's seed derives from it, only the table service makes one."""
    users = set()
    for workload in (m for m in manifests if m["kind"] in WORKLOADS):
        for container in containers(workload):
            env = {var["name"]: var for var in container.get("env", [])}
            if "DAILY_SECRET" in env:
                secret = env["DAILY_SECRET"]["valueFrom"]["secretKeyRef"]
                assert secret == {"name": "rackem-daily", "key": "secret"}
                users.add(f"{workload['kind']}/{workload['metadata']['name']}/{container['name']}")
    assert users == {"Deployment/table/table"}


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


# What each client dials, and the Service it names: (ConfigMap, key) -> Service.
DIALED = {
    ("gateway", "MATCHMAKER_ADDR"): "matchmaker",
    ("gateway", "TABLE_ADDR"): "table",
    ("matchmaker", "TABLE_ADDR"): "table",
    ("table", "BOT_ADDR"): "bot",
}


def test_grpc_clients_dial_headless_services_by_dns(manifests: tuple[Manifest, ...]) -> None:
    """A ClusterIP Service gives a gRPC channel one connection, to one pod, for its life:
    the clients dial ``dns:///name:port`` of a headless Service instead, whose name
    resolves to every ready pod, and balance over them (services/common/channels.py;
    tests/services/common/test_balancing.py shows it on real servers)."""
    config = by_kind(manifests, "ConfigMap")
    services = by_kind(manifests, "Service")
    for (client, key), name in DIALED.items():
        addr = config[client]["data"][key]
        assert addr.startswith("dns:///"), f"{client} {key}={addr}"
        host, port = addr.removeprefix("dns:///").rsplit(":", 1)
        assert host == name  # the namespace's own Service, by the pod's search path
        service = services[name]["spec"]
        assert service["clusterIP"] == "None", f"{name} is not headless"
        assert int(port) in {p["port"] for p in service["ports"]}
        assert not service.get("publishNotReadyAddresses")  # ready pods only
    # The gateway's Service stays a ClusterIP one: the Ingress routes to it.
    assert services["gateway"]["spec"].get("clusterIP") != "None"


def test_every_rackem_container_serves_metrics_on_its_port_named_metrics(
    manifests: tuple[Manifest, ...],
) -> None:
    """Port 9100 named ``metrics`` (what a PodMonitor selects) and METRICS_PORT=9100."""
    config = by_kind(manifests, "ConfigMap")
    for name, deployment in by_kind(manifests, "Deployment").items():
        if name not in SERVICES:
            continue
        (container,) = pod_spec(deployment)["containers"]
        named = {p["name"]: p["containerPort"] for p in container["ports"]}
        assert named["metrics"] == 9100, name
        assert config[name]["data"]["METRICS_PORT"] == "9100", name
        annotations = deployment["spec"]["template"]["metadata"].get("annotations", {})
        assert annotations.get("prometheus.io/port") == "9100", name


def test_the_ingress_controller_keeps_the_client_s_address() -> None:
    """GAMES_PER_IP counts X-Forwarded-For, which the controller sets from its peer: the
    client only if its Service keeps the source (externalTrafficPolicy: Local)."""
    values = yaml.safe_load((ROOT / "k8s" / "base" / "ingress-nginx-values.yaml").read_text())
    assert values["controller"]["service"]["externalTrafficPolicy"] == "Local"
    deploy = (ROOT / "docs" / "deploy.md").read_text()
    assert "externalTrafficPolicy: Local" in deploy and "ingress-nginx-values.yaml" in deploy


def _documented_overlay(title: str) -> str:
    """The kustomization.yaml docs/deploy.md shows under the comment ``# title``."""
    text = (ROOT / "docs" / "deploy.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    (block,) = [b for b in blocks if b.startswith(f"# {title}\n")]
    return block.replace("../../", "K8S/").replace("../prod/", "K8S/overlays/prod/")


def test_prod_autoscales_on_cpu_alone(render: Render) -> None:
    manifests = render("prod")
    for autoscaler in by_kind(manifests, "HorizontalPodAutoscaler").values():
        # CPU only: every cluster has it, so a missing metric never stops a scale-down.
        assert [m["type"] for m in autoscaler["spec"]["metrics"]] == ["Resource"]


def test_prod_with_the_connections_metric_builds_as_documented(tmp_path: Path) -> None:
    manifests = build(_documented_overlay("k8s/overlays/prod-connections"), tmp_path)
    hpa = by_kind(manifests, "HorizontalPodAutoscaler")["gateway"]
    assert [m["type"] for m in hpa["spec"]["metrics"]] == ["Pods", "Resource"]
    for manifest in manifests:
        kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True)


def test_prod_with_redis_behind_sentinel_builds_as_documented(tmp_path: Path) -> None:
    """The Redis choices are alternatives: prod's fleet with the redis-sentinel component
    in place of external-redis builds (docs/deploy.md shows it), and runs its Redis."""
    manifests = build(_documented_overlay("k8s/overlays/prod-sentinel"), tmp_path)
    for manifest in manifests:
        kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True)
    assert policy_problems(manifests) == []
    sets = by_kind(manifests, "StatefulSet")
    assert (
        sets["redis"]["spec"]["replicas"] == 3 and sets["redis-sentinel"]["spec"]["replicas"] == 3
    )
    prod = kustomize(K8S / "overlays" / "prod")
    # Everything else is prod's: the image, the host, the fleet, the policies.
    same = ("Deployment", "HorizontalPodAutoscaler", "Ingress", "PodDisruptionBudget")
    for kind in same:
        assert by_kind(prod, kind).keys() <= by_kind(manifests, kind).keys()
    for name, deployment in by_kind(prod, "Deployment").items():
        assert by_kind(manifests, "Deployment")[name]["spec"] == deployment["spec"]
    redis_url_from_the_secret(manifests)


def test_external_redis_and_redis_sentinel_do_not_go_together(tmp_path: Path) -> None:
    """Why the docs call them alternatives: together they do not build."""
    (tmp_path / "kustomization.yaml").write_text(
        _documented_overlay("k8s/overlays/prod-sentinel")
        .replace(
            "K8S/components/redis-sentinel",
            "K8S/components/external-redis\n  - K8S/components/redis-sentinel",
        )
        .replace("K8S/", os.path.relpath(K8S, tmp_path) + "/")
    )
    done = subprocess.run(
        [kubectl(), "kustomize", str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
