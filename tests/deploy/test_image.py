"""The Dockerfile builds one small, non-root image that runs every service.

Its base is pinned by digest; on a machine without a registry the tests build it on the
local python:3.11-slim that scripts/setup builds (scripts/containers/build-python-image).
The Python packages in it are the lock's (requirements/runtime.txt), hashes checked.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from packaging.utils import canonicalize_name

from tests.deploy.lockfile import read

if TYPE_CHECKING:
    from tests.conftest import Engine

ROOT = Path(__file__).resolve().parents[2]
TAG = "localhost/rackem:test"
MAX_SIZE_MB = 400

pytestmark = [pytest.mark.containers, pytest.mark.timeout(900)]


def run(*command: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def image(container_engine: Engine) -> str:
    """The image built from the Dockerfile (layers cached between runs)."""
    base = container_engine.base_images().get("PYTHON_IMAGE")
    args = ["--build-arg", f"PYTHON_IMAGE={base}"] if base else []
    built = run(container_engine.cli, "build", "--quiet", *args, "-t", TAG, str(ROOT), timeout=850)
    assert built.returncode == 0, built.stderr[-4000:]
    return TAG


@pytest.fixture(scope="module")
def config(container_engine: Engine, image: str) -> dict[str, Any]:
    inspected = run(container_engine.cli, "image", "inspect", image)
    assert inspected.returncode == 0, inspected.stderr
    (details,) = json.loads(inspected.stdout)
    return dict(details)


def test_image_starts_rackem_serve_gateway_as_a_non_root_user(config: dict[str, Any]) -> None:
    settings = config["Config"]
    assert settings["Entrypoint"] == ["rackem"]
    assert settings["Cmd"] == ["serve", "gateway"]
    assert settings["User"] == "10001:10001"
    assert {"8000/tcp", "50051/tcp", "50052/tcp", "50053/tcp"} <= set(settings["ExposedPorts"])


def test_image_is_small(config: dict[str, Any]) -> None:
    assert config["Size"] < MAX_SIZE_MB * 1_000_000


def test_image_runs_the_cli_on_a_read_only_root(container_engine: Engine, image: str) -> None:
    ran = run(
        container_engine.cli, "run", "--rm", "--read-only", "--network", "none", image, "--help"
    )
    assert ran.returncode == 0, ran.stderr
    for command in ("serve", "verify", "replay"):
        assert command in ran.stdout


def test_image_holds_every_service_and_the_web_client(container_engine: Engine, image: str) -> None:
    script = (
        "import importlib, os, pathlib;"
        "names = ['services.gateway.app', 'services.table.server',"
        " 'services.matchmaker.server', 'services.bot.server', 'rackem.serve',"
        " 'services.archive.postgres', 'services.archive.sqlite', 'rackem.migrate'];"
        "[importlib.import_module(name) for name in names];"
        "from services.archive import schema; schema.head();"  # the migrations are in it
        "import services.gateway as gateway;"
        "static = pathlib.Path(gateway.__file__).parent / 'static';"
        "print(os.getuid(), sum(1 for p in static.rglob('*') if p.is_file()))"
    )
    ran = run(
        container_engine.cli, "run", "--rm", "--read-only", "--network", "none",
        "--entrypoint", "python", image, "-c", script,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    uid, static_files = ran.stdout.split()
    assert uid == "10001"
    assert int(static_files) > 0


def test_image_holds_exactly_the_locked_runtime_set(container_engine: Engine, image: str) -> None:
    """requirements/runtime.txt, each pin whose marker holds on the image's Python at its
    version, and nothing else but the package itself."""
    script = (
        "import importlib.metadata as m, json, platform, sys;"
        "print(json.dumps({'dists': {d.metadata['Name']: d.version for d in m.distributions()},"
        " 'env': {'python_full_version': platform.python_version(),"
        " 'python_version': '%d.%d' % sys.version_info[:2], 'sys_platform': sys.platform,"
        " 'platform_python_implementation': platform.python_implementation(),"
        " 'platform_machine': platform.machine(), 'os_name': 'posix',"
        " 'platform_system': platform.system(), 'implementation_name': sys.implementation.name}}))"
    )
    ran = run(
        container_engine.cli, "run", "--rm", "--read-only", "--network", "none",
        "--entrypoint", "python", image, "-c", script,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    found = json.loads(ran.stdout)
    installed = {canonicalize_name(name): version for name, version in found["dists"].items()}
    assert installed.pop("rackem") == "0.1.0"
    locked = {
        pin.name: pin.version for pin in read("runtime.txt").values() if pin.applies(found["env"])
    }
    assert installed == locked
