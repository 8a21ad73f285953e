"""components/redis-sentinel: a primary, two replicas and three Sentinels that survive
restarts and drains: Sentinel state on volumes, a start that asks before it assumes, one
pod a node, disruption budgets, pinned images, the network paths it needs. And the start
scripts, run for real (sh, Debian's redis-cli) against Debian's redis-server and
redis-sentinel on loopback, each pod on an address of its own: the primary they choose,
and the Redis or Sentinel they start."""

from __future__ import annotations

import contextlib
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import redis

from tests.deploy.conftest import build
from tests.deploy.test_kustomize import (
    KUBERNETES_VERSION,
    by_kind,
    pod_spec,
    policy_problems,
    redis_url_from_the_secret,
)
from tests.deploy.test_network_policies import DESIGNED, NAMESPACES, OUTSIDE, SENTINEL, reachable
from tests.redis_engines import ONCE, Server, _binary, _wait_serving, free_port

Manifest = dict[str, Any]
DIGEST = re.compile(r"^[a-z0-9./-]+(:[\w.-]+)?@sha256:[0-9a-f]{64}$")
COMPOSE_REDIS = re.compile(r"redis:7[.\d]*@sha256:[0-9a-f]{64}")

WITH_SENTINEL = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: rackem-ha
resources:
  - K8S/base
components:
  - K8S/components/network-policies
  - K8S/components/redis-sentinel
"""


@pytest.fixture(scope="module")
def manifests(tmp_path_factory: pytest.TempPathFactory) -> tuple[Manifest, ...]:
    """The base with network policies and the component, as an operator's overlay would
    compose them (rendered once: the tests only read it)."""
    return build(WITH_SENTINEL, tmp_path_factory.mktemp("overlay"))


def test_it_validates_and_meets_the_policy(manifests: tuple[Manifest, ...]) -> None:
    for manifest in manifests:
        kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True)
    assert policy_problems(manifests) == []
    redis_url_from_the_secret(manifests)


def test_a_primary_two_replicas_and_three_sentinels(manifests: tuple[Manifest, ...]) -> None:
    """WAIT for one replica of two: a replica restarting or drained stops no move."""
    sets = by_kind(manifests, "StatefulSet")
    assert sets["redis"]["spec"]["replicas"] == 3
    assert sets["redis-sentinel"]["spec"]["replicas"] == 3
    assert pod_spec(sets["redis"])["containers"][0]["args"] == ["/scripts/redis.sh"]
    for service in ("table", "matchmaker"):  # a move, a seat or a room: on a replica
        wait = int(by_kind(manifests, "ConfigMap")[service]["data"]["REDIS_WAIT_REPLICAS"])
        assert wait == 1 and sets["redis"]["spec"]["replicas"] - 1 > wait


def test_sentinels_keep_their_state_on_a_volume(manifests: tuple[Manifest, ...]) -> None:
    sentinels = by_kind(manifests, "StatefulSet")["redis-sentinel"]
    (claim,) = sentinels["spec"]["volumeClaimTemplates"]
    assert claim["metadata"]["name"] == "data"
    pod = pod_spec(sentinels)
    assert "data" not in {v["name"] for v in pod["volumes"]}  # not an emptyDir
    (container,) = pod["containers"]
    assert {m["name"]: m["mountPath"] for m in container["volumeMounts"]}["data"] == "/data"
    script = by_kind(manifests, "ConfigMap")["redis-sentinel"]["data"]["sentinel.sh"]
    assert "conf=/data/sentinel.conf" in script


def test_one_pod_a_node_and_one_disrupted_at_a_time(manifests: tuple[Manifest, ...]) -> None:
    sets = by_kind(manifests, "StatefulSet")
    budgets = by_kind(manifests, "PodDisruptionBudget")
    for name in ("redis", "redis-sentinel"):
        labels = {"app.kubernetes.io/name": name}
        (term,) = pod_spec(sets[name])["affinity"]["podAntiAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]
        assert term["topologyKey"] == "kubernetes.io/hostname"
        assert term["labelSelector"]["matchLabels"] == labels
        assert budgets[name]["spec"] == {"maxUnavailable": 1, "selector": {"matchLabels": labels}}


def test_redis_images_are_compose_s_pinned_one(manifests: tuple[Manifest, ...]) -> None:
    compose = (Path(__file__).resolve().parents[2] / "compose.yaml").read_text()
    (pinned,) = set(COMPOSE_REDIS.findall(compose))
    for name in ("redis", "redis-sentinel"):
        for container in pod_spec(by_kind(manifests, "StatefulSet")[name])["containers"]:
            assert DIGEST.match(container["image"])
            assert container["image"] == pinned


def test_its_network_paths_are_the_designed_ones(manifests: tuple[Manifest, ...]) -> None:
    pods = {
        m["metadata"]["name"]
        for m in manifests
        if m["kind"] in ("Deployment", "StatefulSet", "Job")
    }
    designed = {
        path for path in DESIGNED | SENTINEL if {path[0], path[1]} <= pods | {OUTSIDE, *NAMESPACES}
    }
    assert reachable(manifests) == designed


# The start scripts, run by sh as the pods run them, against real Redis pods and
# Sentinels on loopback. Kubernetes gives each pod an address of its own and the same
# port; so here Redis pod N is 127.0.0.1N and Sentinel N 127.0.0.2N (all of 127/8 is
# loopback on Linux), all Redis pods on one free port and all Sentinels on another,
# which the scripts learn from REDIS_PODS and SENTINEL_PODS (unset in Kubernetes: its
# names, 6379 and 26379). What a pod mounts (/scripts, /data, /etc/redis/redis.conf) is
# a directory of the test's. The redis-server the script execs is Debian's, told the
# pod's address (a pod binds all of its own) and a log file, and it starts: a test asks
# it what it became (INFO replication; a Sentinel's primary, id and epoch), and reads the
# configuration file the script handed it (a copy kept as handed.conf).

PASSWORD = "secret-of-today"


def redis_host(n: int) -> str:
    return f"127.0.0.1{n}"


def sentinel_host(n: int) -> str:
    return f"127.0.0.2{n}"


def _ordinal(pod: str) -> int:
    return int(pod.rsplit("-", 1)[1])


@dataclass
class Pod(Server):
    """A redis-server on a pod's own loopback address, on the port every Redis pod has."""

    host: str = "127.0.0.1"

    @property
    def addr(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self) -> None:
        self._start()  # once: on another port it would be no pod the scripts know

    def client(self) -> redis.Redis:
        return redis.Redis(
            host=self.host,
            port=self.port,
            password=self.password,
            socket_timeout=5,
            decode_responses=True,
        )

    def _ping(self) -> bool:
        with redis.Redis(
            host=self.host, port=self.port, password=self.password, socket_timeout=1, retry=ONCE
        ) as client:
            return bool(client.ping())

    def stop(self) -> None:
        if self.process is not None:
            _stop(self.process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, as Kubernetes stops a pod, again while a replica writing its first AOF
    after a sync refuses it; SIGKILL if it is still there after a while."""
    for _ in range(50):
        if process.poll() is not None:
            return
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(0.1)
    process.kill()
    process.wait(10)


def _ping(host: str, port: int, password: str | None = None) -> Callable[[], bool]:
    def ping() -> bool:
        with redis.Redis(
            host=host, port=port, password=password, socket_timeout=1, retry=ONCE
        ) as client:
            return bool(client.ping())

    return ping


def _wait(what: str, done: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout_s} s: {what}")
        time.sleep(0.05)


class Pods:
    """The Redis pods and Sentinels of one test, and the start scripts run as a pod."""

    def __init__(self, manifests: tuple[Manifest, ...], workdir: Path) -> None:
        self.manifests = manifests
        self.workdir = workdir
        self.redis_port = free_port()
        self.sentinel_port = free_port()
        while self.sentinel_port == self.redis_port:
            self.sentinel_port = free_port()
        self.servers: list[Pod] = []
        self.processes: list[subprocess.Popen[bytes]] = []
        self.pod = workdir / "pod"  # what the pod the script runs in mounts
        self._mount()

    def _mount(self) -> None:
        """The ConfigMaps as the pods mount them: the scripts at /scripts, the base's
        redis.conf at /etc/redis (listening on the Redis pods' port), /data; and a PATH
        whose redis-server is Debian's with the pod's address and a log file."""
        (self.pod / "data").mkdir(parents=True)
        configs = by_kind(self.manifests, "ConfigMap")

        def mounted(text: str) -> str:
            return (
                text.replace("/data", f"{self.pod}/data")
                .replace("/scripts/", f"{self.pod}/")
                .replace("/etc/redis/redis.conf", f"{self.pod}/redis.conf")
            )

        for name, text in configs["redis-sentinel"]["data"].items():
            (self.pod / name).write_text(mounted(text))
        redis_conf = mounted(configs["redis"]["data"]["redis.conf"])
        (self.pod / "redis.conf").write_text(f"{redis_conf}port {self.redis_port}\n")
        bin = self.pod / "bin"
        bin.mkdir()
        (bin / "redis-server").write_text(
            "#!/bin/sh\n"
            '[ -f "$1" ] && cp "$1" "$POD_DIR/handed.conf"  # the file the script hands over\n'
            f'exec {_binary("redis-server")} "$@" --bind "$POD_ADDRESS" --logfile "$POD_LOG"\n'
        )
        (bin / "redis-server").chmod(0o755)

    def server(self, n: int, replica_of: int | None = None) -> Pod:
        """Redis pod ``n``, a primary or the replica of Redis pod ``replica_of``."""
        host = redis_host(n)
        args = ["--bind", host, "--replica-announce-ip", host, "--repl-diskless-sync-delay", "0"]
        if replica_of is not None:
            args += ["--replicaof", redis_host(replica_of), str(self.redis_port)]
        server = Pod(
            self.workdir / f"redis-{n}", PASSWORD, args=args, port=self.redis_port, host=host
        )
        self.servers.append(server)
        server.start()
        if replica_of is not None:
            primary = next(s for s in self.servers if s.host == redis_host(replica_of))
            _wait(f"redis-{n} in sync", lambda: _replicas(primary) == [(host, "online")])
        return server

    def sentinel(self, n: int, monitors: int) -> None:
        """Sentinel ``n``, which knows Redis pod ``monitors`` as the primary."""
        host, directory = sentinel_host(n), self.workdir / f"sentinel-{n}"
        directory.mkdir()
        conf, log = directory / "sentinel.conf", directory / "sentinel.log"
        conf.write_text(
            f"port {self.sentinel_port}\nbind {host}\ndir {directory}\nlogfile {log}\n"
            f"sentinel monitor rackem {redis_host(monitors)} {self.redis_port} 2\n"
            f"sentinel auth-pass rackem {PASSWORD}\n"
        )
        process = subprocess.Popen([_binary("redis-sentinel"), str(conf)], stdin=subprocess.DEVNULL)
        self.processes.append(process)
        _wait_serving(f"sentinel-{n}", process, _ping(host, self.sentinel_port), log, 0)

    def start(self, script: str, pod: str, password: str = PASSWORD) -> redis.Redis:
        """Run ``script`` as ``pod`` does, until the redis-server it execs answers; a
        client of that server."""
        host, port = (
            (redis_host(_ordinal(pod)), self.redis_port)
            if script == "redis.sh"
            else (sentinel_host(_ordinal(pod)), self.sentinel_port)
        )
        log = self.pod / "pod.log"
        env = {
            "PATH": f"{self.pod / 'bin'}:/usr/local/bin:/usr/bin:/bin",
            **_pod_env(self.manifests, pod, password),
            "REDIS_PODS": f"127.0.0.1%s:{self.redis_port}",
            "SENTINEL_PODS": f"127.0.0.2%s:{self.sentinel_port}",
            "POD_ADDRESS": host,
            "POD_LOG": str(log),
            "POD_DIR": str(self.pod),
        }
        since = log.stat().st_size if log.exists() else 0
        with log.open("ab") as output:
            process = subprocess.Popen(
                ["sh", str(self.pod / script)],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        self.processes.append(process)
        # A Sentinel has no password; a Redis pod the Secret's.
        auth = password if script == "redis.sh" else None
        _wait_serving(f"{script} as {pod}", process, _ping(host, port, auth), log, since)
        return redis.Redis(
            host=host, port=port, password=auth, socket_timeout=5, decode_responses=True
        )

    def stop(self) -> None:
        for process in self.processes:
            _stop(process)
        for server in self.servers:
            server.stop()


def _pod_env(manifests: tuple[Manifest, ...], pod: str, password: str) -> dict[str, str]:
    """The environment the StatefulSet gives ``pod``'s container: its name, the Secret's
    password."""
    (container,) = pod_spec(by_kind(manifests, "StatefulSet")[pod.rsplit("-", 1)[0]])["containers"]
    env: dict[str, str] = {}
    for var in container.get("env", []):
        source = var.get("valueFrom", {})
        if "value" in var:
            env[var["name"]] = var["value"]
        elif source.get("secretKeyRef") == {"name": "rackem-redis", "key": "password"}:
            env[var["name"]] = password
        elif source.get("fieldRef", {}).get("fieldPath") == "metadata.name":
            env[var["name"]] = pod
        else:
            raise AssertionError(f"{pod}: what is {var}?")
    return env


def _replicas(primary: Pod) -> list[tuple[str, str]]:
    """The replicas ``primary`` has (address, state), if it is a primary."""
    with primary.client() as client:
        info = client.info("replication")
    return [
        (str(info[f"slave{i}"]["ip"]), str(info[f"slave{i}"]["state"]))
        for i in range(int(info.get("connected_slaves", 0)))
    ]


@pytest.fixture
def pods(manifests: tuple[Manifest, ...], tmp_path: Path) -> Iterator[Pods]:
    started = Pods(manifests, tmp_path)
    try:
        yield started
    finally:
        started.stop()


def test_in_kubernetes_the_scripts_ask_the_pods_by_name(manifests: tuple[Manifest, ...]) -> None:
    """Without REDIS_PODS and SENTINEL_PODS (as in the pods): Kubernetes' names and ports."""
    primary_sh = by_kind(manifests, "ConfigMap")["redis-sentinel"]["data"]["primary.sh"]
    done = subprocess.run(
        [
            "sh",
            "-c",
            f'{primary_sh}\nredis_host 1; sentinel_host 2; echo "$redis_port $sentinel_port"',
        ],
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.splitlines() == [
        "redis-1.redis",
        "redis-sentinel-2.redis-sentinel",
        "6379 26379",
    ]


def _a_sentinel_knows(pods: Pods) -> int:
    """A Sentinel that knows: its word, over a Redis pod that is a primary of its own."""
    pods.server(0)
    pods.server(1)
    pods.sentinel(1, monitors=1)
    return 1


def _the_demoted_one_restarted_alone(pods: Pods) -> int:
    """No Sentinel answers: the Redis pod that is a primary with a replica, over a lone
    one (the demoted redis-0 restarted on its own after the failover)."""
    pods.server(1)
    pods.server(2, replica_of=1)
    pods.server(0)
    return 1


def _a_lone_primary(pods: Pods) -> int:
    """A lone primary is still one."""
    pods.server(2)
    return 2


def _nobody(pods: Pods) -> int:
    """Nobody answers: a new installation, redis-0."""
    return 0


@pytest.mark.parametrize(
    "arrange", [_a_sentinel_knows, _the_demoted_one_restarted_alone, _a_lone_primary, _nobody]
)
def test_a_sentinel_starting_afresh_asks_before_it_assumes(
    pods: Pods, arrange: Callable[[Pods], int]
) -> None:
    primary = redis_host(arrange(pods))
    with pods.start("sentinel.sh", "redis-sentinel-0") as sentinel:
        assert sentinel.sentinel_get_master_addr_by_name("rackem") == (primary, pods.redis_port)
    conf = (pods.pod / "handed.conf").read_text().splitlines()
    assert f"sentinel monitor rackem {primary} {pods.redis_port} 2" in conf
    assert f"sentinel auth-pass rackem {PASSWORD}" in conf
    assert f"sentinel announce-ip {sentinel_host(0)}" in conf


def test_a_restarted_sentinel_keeps_what_it_knew(pods: Pods) -> None:
    """Its sentinel.conf, as Sentinel rewrote it (here after a failover: the primary, the
    epoch, its id), is kept; only the password is the Secret's of today. Nobody is asked:
    the Redis pods are down, and asking would have made it redis-0."""
    pods.server(0)
    pods.server(1, replica_of=0)
    with pods.start("sentinel.sh", "redis-sentinel-2", password=PASSWORD) as sentinel:
        myid = sentinel.execute_command("SENTINEL", "MYID")

        def failover() -> bool:
            try:
                return bool(sentinel.sentinel_failover("rackem"))
            except redis.ResponseError:  # NOGOODSLAVE: it has not yet found the replica
                return False

        def failed_over() -> bool:
            state = sentinel.sentinel_master("rackem")
            return bool(state["ip"] == redis_host(1) and state["flags"] == "master")

        _wait("the Sentinel takes a failover", failover)
        _wait("a failover to redis-1", failed_over)
    pods.stop()  # the Sentinel, and with it the Redis pods
    remembered = (pods.pod / "data" / "sentinel.conf").read_text().splitlines()
    assert f"sentinel monitor rackem {redis_host(1)} {pods.redis_port} 2" in remembered
    assert "sentinel config-epoch rackem 1" in remembered

    with pods.start("sentinel.sh", "redis-sentinel-2", password="secret-of-tomorrow") as again:
        assert again.execute_command("SENTINEL", "MYID") == myid
        assert again.sentinel_get_master_addr_by_name("rackem") == (
            redis_host(1),
            pods.redis_port,
        )
        assert again.sentinel_master("rackem")["config-epoch"] == 1
    handed = (pods.pod / "handed.conf").read_text().splitlines()
    assert handed == [
        *(line for line in remembered if not line.startswith("sentinel auth-pass rackem ")),
        "sentinel auth-pass rackem secret-of-tomorrow",
    ]


def _the_demoted_one_finds_the_new_primary(pods: Pods) -> int | None:
    """The demoted old primary, its Sentinels away: it finds the primary of the day."""
    pods.server(1)
    pods.server(2, replica_of=1)
    return 1


def _a_sentinel_names_it(pods: Pods) -> int | None:
    """A Sentinel's word, over a Redis pod that is a primary of its own."""
    pods.server(0)
    pods.server(1)
    pods.sentinel(2, monitors=1)
    return 1


def _a_new_installation(pods: Pods) -> int | None:
    """Nobody: redis-0 starts as the primary, the others follow it."""
    return None


def _a_new_installation_s_redis_0_not_up_yet(pods: Pods) -> int | None:
    return 0


@pytest.mark.parametrize(
    ("pod", "arrange"),
    [
        ("redis-0", _the_demoted_one_finds_the_new_primary),
        ("redis-2", _a_sentinel_names_it),
        ("redis-0", _a_new_installation),
        ("redis-1", _a_new_installation_s_redis_0_not_up_yet),
    ],
)
def test_a_redis_pod_starts_as_the_replica_of_the_primary_it_finds(
    pods: Pods, pod: str, arrange: Callable[[Pods], int | None]
) -> None:
    replica_of = arrange(pods)
    me = redis_host(_ordinal(pod))
    with pods.start("redis.sh", pod) as server:
        info = server.info("replication")
        if replica_of is None:
            assert info["role"] == "master"
            return
        assert info["role"] == "slave"
        assert (info["master_host"], info["master_port"]) == (
            redis_host(replica_of),
            pods.redis_port,
        )
    primary = next((s for s in pods.servers if s.host == redis_host(replica_of)), None)
    if primary is not None:  # it replicates, with the password, under the name it announces
        _wait(f"{pod} in sync", lambda: (me, "online") in _replicas(primary))
