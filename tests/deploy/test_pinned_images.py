"""Every image the project does not build itself is named by digest: the Dockerfile's base,
compose's Redis, PostgreSQL, build base and monitoring images, and every container of every
overlay and of the monitoring component. A tag moves under us (docs/dependencies.md,
"Base images")."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DIGEST = re.compile(r"^[a-z0-9._/-]+(:[\w.-]+)?@sha256:[0-9a-f]{64}$")
OWN = "rackem"  # the image the Dockerfile builds, named by each overlay


def _default(value: str) -> str:
    """``${NAME:-default}`` -> ``default``; anything else as it is."""
    found = re.fullmatch(r"\$\{[A-Z_]+:-(.+)\}", value)
    return found[1] if found else value


def test_the_dockerfile_base_is_pinned_by_digest() -> None:
    (default,) = re.findall(r"^ARG PYTHON_IMAGE=(\S+)$", (ROOT / "Dockerfile").read_text(), re.M)
    assert DIGEST.match(default), default


def test_compose_pins_the_images_it_does_not_build() -> None:
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    for name, service in compose["services"].items():
        image = _default(str(service.get("image", "")))
        if "rackem" in image:
            continue
        assert DIGEST.match(image), f"{name}: {image}"
        for arg, value in (service.get("build", {}).get("args") or {}).items():
            if arg.endswith("_IMAGE"):
                assert DIGEST.match(_default(value)), f"{name} build arg {arg}: {value}"
    bases = [
        s["build"]["args"]["PYTHON_IMAGE"] for s in compose["services"].values() if "build" in s
    ]
    assert bases, "no service builds the image"


def test_every_overlay_pins_the_images_it_does_not_build(
    manifests: tuple[dict[str, Any], ...],
) -> None:
    unpinned = []
    for manifest in manifests:
        spec = manifest.get("spec", {})
        pod = spec.get("template", {}).get("spec", {}) if "template" in spec else {}
        for container in pod.get("containers", []) + pod.get("initContainers", []):
            image = container["image"]
            if image.split("@")[0].split(":")[0].rsplit("/", 1)[-1] == OWN:
                continue
            if not DIGEST.match(image):
                unpinned.append(f"{manifest['kind']}/{manifest['metadata']['name']}: {image}")
    assert unpinned == []


def test_the_monitoring_component_pins_the_containers_it_adds() -> None:
    patch = yaml.safe_load((ROOT / "k8s/components/monitoring/redis-exporter.yaml").read_text())
    images = [op["value"]["image"] for op in patch if "image" in op.get("value", {})]
    assert images, "the component adds no container"
    assert [image for image in images if not DIGEST.match(image)] == []
