"""Top-level fixtures: the container engine, and a real Redis for the whole session; and
``kill -USR1 <pytest's pid>`` to see what a hung test waits on (tests/hangs.py).

Machines without a Docker engine run podman behind the Docker API on
``/run/podman/podman.sock`` (``scripts/setup``; ``docs/containers.md``). When that
socket exists and nothing says where another engine is, this module points every Docker
client (testcontainers, the docker SDK and CLI, compose) at podman before any test runs,
so a plain ``pytest`` works as well as ``scripts/test``.
"""

from __future__ import annotations

import asyncio
import gc
import os
import shutil
import signal
import subprocess
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from hangs import dump_tasks
from postgres_engine import Postgres
from published_ports import published_port
from redis_engines import Engines, Single

PODMAN_SOCKET = Path("/run/podman/podman.sock")
DOCKER_SOCKET = Path("/var/run/docker.sock")
PODMAN_HOST = f"unix://{PODMAN_SOCKET}"


def podman_environment(
    environ: Mapping[str, str],
    podman_socket: Path = PODMAN_SOCKET,
    docker_socket: Path = DOCKER_SOCKET,
) -> dict[str, str]:
    """The variables that point Docker clients at podman, or ``{}`` to leave them be."""
    host = environ.get("DOCKER_HOST")
    if host is None:
        if not podman_socket.is_socket() or docker_socket.exists():
            return {}
    elif host != f"unix://{podman_socket}":
        return {}
    return {
        "DOCKER_HOST": f"unix://{podman_socket}",
        # The reaper image cannot be pulled; fixtures stop their own containers.
        "TESTCONTAINERS_RYUK_DISABLED": "true",
        # /.dockerenv exists on these machines and misleads testcontainers' detection.
        "TESTCONTAINERS_CONNECTION_MODE": "docker_host",
        # Without it compose tries to pull a BuildKit image.
        "DOCKER_BUILDKIT": "0",
    }


for _name, _value in podman_environment(os.environ).items():
    os.environ.setdefault(_name, _value)


signal.signal(signal.SIGUSR1, dump_tasks)


def _hold_grpc_aio() -> object:
    """One aio channel (never used) kept for the whole session, so gRPC's asyncio layer
    is set up once, as in a service's process. gRPC counts its live aio channels and
    servers and tears the whole layer down (its completion queue, its poller thread,
    grpc core) when none is left, which between tests happened every few tests
    (the poller thread's name counted past 70), and sets it up again on the next."""
    import grpc

    loop = asyncio.new_event_loop()
    try:

        async def channel() -> grpc.aio.Channel:
            return grpc.aio.insecure_channel("127.0.0.1:9")  # never dialled: no call on it

        return loop.run_until_complete(channel())
    finally:
        loop.close()


_GRPC_AIO_HELD = _hold_grpc_aio()


@pytest.fixture(scope="session", autouse=True)
def own_data_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """``rackem up`` keeps finished matches under ``$XDG_DATA_HOME/rackem``: in tests (and
    every ``rackem up`` they start) a temporary directory, never the user's own."""
    saved = os.environ.get("XDG_DATA_HOME")
    os.environ["XDG_DATA_HOME"] = str(tmp_path_factory.mktemp("data-home"))
    yield
    if saved is None:
        os.environ.pop("XDG_DATA_HOME", None)
    else:
        os.environ["XDG_DATA_HOME"] = saved


@pytest.fixture
def podman_environment_rule() -> Callable[..., dict[str, str]]:
    """``podman_environment`` itself, for its tests (conftest modules are not imported)."""
    return podman_environment


@dataclass(frozen=True)
class Engine:
    """The container engine that answers on ``DOCKER_HOST`` (or the default socket)."""

    cli: str  # the command that builds and runs images: "podman" or "docker"
    podman: bool  # podman here runs no healthchecks by itself (see run-healthchecks)
    version: str

    def base_images(self) -> dict[str, str]:
        """The settings that point a build and compose at the local base images
        (scripts/containers/: no registry here) where this engine has them; none where it
        has not, so that the digests pinned in Dockerfile and compose.yaml are pulled."""
        local = {
            "PYTHON_IMAGE": LOCAL_PYTHON_IMAGE,
            "RACKEM_REDIS_IMAGE": LOCAL_REDIS_IMAGE,
            "RACKEM_POSTGRES_IMAGE": LOCAL_POSTGRES_IMAGE,
        }
        have = {
            name: image
            for name, image in local.items()
            if subprocess.run(
                [self.cli, "image", "inspect", image], capture_output=True, timeout=60
            ).returncode
            == 0
        }
        return have


LOCAL_PYTHON_IMAGE = "localhost/python:3.11-slim"  # scripts/containers/build-python-image
LOCAL_REDIS_IMAGE = "localhost/redis:7"  # scripts/containers/build-redis-image
LOCAL_POSTGRES_IMAGE = "localhost/postgres:15"  # scripts/containers/build-postgres-image


@pytest.fixture(scope="session")
def container_engine() -> Engine:
    """The engine, or a clear failure (never a skip) when none answers."""
    import docker

    problem = ""
    try:
        client = docker.from_env(timeout=10)
        try:
            version = client.version()
        finally:
            client.close()
    except docker.errors.DockerException as error:
        problem = str(error)
    if problem:
        # The docker SDK leaves the failed connection's socket to the garbage collector.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            gc.collect()
        where = os.environ.get("DOCKER_HOST", "the default socket")
        pytest.fail(
            f"no container engine answers at {where}: {problem}\n"
            "Run scripts/setup: it sets podman up when no Docker engine runs.",
            pytrace=False,
        )
    components = version.get("Components") or []
    podman = any("podman" in str(part.get("Name", "")).lower() for part in components)
    cli = "podman" if podman and shutil.which("podman") else "docker"
    return Engine(cli=cli, podman=podman, version=str(version.get("Version", "?")))


@pytest.fixture(scope="session")
def redis_url(container_engine: Engine) -> Iterator[str]:
    """The URL of a real Redis in a container, shared by the session.

    The image is ``RACKEM_REDIS_IMAGE`` (default ``redis:7``, which on a machine set up
    by ``scripts/setup`` finds the local ``localhost/redis:7``). Tests share it: use
    keys of your own (a random prefix or table id), or FLUSHDB in your own fixture.
    """
    from testcontainers.community.redis import RedisContainer

    image = os.environ.get("RACKEM_REDIS_IMAGE", "redis:7")
    _remove_orphans()
    # On a port no server of ours can be given (tests/published_ports.py); labelled so
    # that a later session removes it if this one is killed (no reaper runs here).
    container = RedisContainer(image).with_bind_ports(6379, published_port())
    container.with_kwargs(labels={OWNER_LABEL: str(os.getpid())})
    with container:
        host = container.get_container_host_ip()
        port = container.get_exposed_port(container.port)
        yield f"redis://{host}:{port}/0"


OWNER_LABEL = "rackem.tests.pid"


def _remove_orphans() -> None:
    """Remove test containers whose pytest process is gone (killed before its teardown)."""
    import docker

    client = docker.from_env(timeout=30)
    try:
        for found in client.containers.list(all=True, filters={"label": OWNER_LABEL}):
            pid = int(found.labels.get(OWNER_LABEL, "0") or 0)
            if pid and _alive(pid):
                continue
            found.remove(force=True)
    finally:
        client.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@pytest.fixture(scope="session")
def redis_engines(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engines]:
    """Debian's redis-server and redis-sentinel on loopback (tests/redis_engines.py): a
    single server, a 3-primary cluster and a Sentinel group, each started on first use
    and shared by the session. ``redis_engines.url(kind)`` for ``kind`` in ``KINDS``."""
    engines = Engines(tmp_path_factory.mktemp("redis-engines"))
    try:
        yield engines
    finally:
        engines.stop()


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """Debian's PostgreSQL on loopback under its own user (tests/postgres_engine.py),
    started on first use and shared by the session: ``postgres.database()`` makes each
    test a database of its own and returns its URL."""
    server = Postgres()
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def own_postgres() -> Iterator[Postgres]:
    """A PostgreSQL server of the test's own (not the session's), for it to stop and start."""
    server = Postgres()
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[Single]:
    """A Redis server of the test's own with no replica (so ``WAIT 1`` never holds), for
    it to cut off, stop and start."""
    engine = Single(tmp_path)
    engine.start()
    try:
        yield engine
    finally:
        engine.stop()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses a container fixture with ``containers``, and run the
    browser tests last: Playwright's sync API leaves an event loop running in this
    thread, so an asyncio test after one could not start its own (``tests/`` in path
    order has them last already; this keeps any chosen files in a working order)."""
    for item in items:
        if "container_engine" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.containers)
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)
