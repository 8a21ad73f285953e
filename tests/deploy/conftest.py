"""Fixtures for the deployment tests: rendered kustomize overlays, the compose CLI.

Every test that takes ``overlay`` (or ``manifests``) runs once per overlay under
``k8s/overlays/``, so a new overlay is checked without touching the tests.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.kubectl import kubectl

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "k8s"
OVERLAYS = sorted(
    path.name for path in (K8S / "overlays").iterdir() if (path / "kustomization.yaml").is_file()
)

Manifest = dict[str, Any]


@functools.cache
def kustomize(path: Path) -> tuple[Manifest, ...]:
    """``kubectl kustomize PATH``, parsed; a clear failure if it cannot be built."""
    result = subprocess.run(
        [kubectl(), "kustomize", str(path)], capture_output=True, text=True, timeout=120
    )
    if result.returncode != 0:
        pytest.fail(f"kubectl kustomize {path} failed:\n{result.stderr}", pytrace=False)
    return tuple(doc for doc in yaml.safe_load_all(result.stdout) if doc)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "overlay" in metafunc.fixturenames:
        metafunc.parametrize("overlay", OVERLAYS)


@pytest.fixture
def manifests(overlay: str) -> tuple[Manifest, ...]:
    """Every object that ``overlay`` renders to."""
    return kustomize(K8S / "overlays" / overlay)


def build(kustomization: str, where: Path) -> tuple[Manifest, ...]:
    """Render ``kustomization`` (a kustomization.yaml's text, whose paths under k8s/ are
    written ``K8S/...``) from the directory ``where``, as an operator's own overlay."""
    up = os.path.relpath(K8S, where)
    (where / "kustomization.yaml").write_text(kustomization.replace("K8S/", f"{up}/"))
    return kustomize(where)


@pytest.fixture
def render() -> Callable[[str], tuple[Manifest, ...]]:
    """Render one overlay by name, for tests about that overlay alone."""

    def render(overlay: str) -> tuple[Manifest, ...]:
        assert overlay in OVERLAYS
        return kustomize(K8S / "overlays" / overlay)

    return render


@pytest.fixture(scope="session")
def compose() -> list[str]:
    """The command that runs docker compose v2 (scripts/setup installs the plugin)."""
    docker = shutil.which("docker")
    if docker is None:
        pytest.fail("the docker CLI is not installed (compose runs through it)", pytrace=False)
    probe = subprocess.run([docker, "compose", "version"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.fail(
            f"docker compose v2 is missing: run scripts/setup\n{probe.stderr}", pytrace=False
        )
    return [docker, "compose", "--project-directory", str(ROOT), "-f", str(ROOT / "compose.yaml")]
