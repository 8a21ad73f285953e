"""The lock (requirements/, scripts/lock) against pyproject.toml and what is installed: every
pin hashed, the runtime set the dev set's own pins, every range in pyproject met by the lock,
and this environment exactly the lock (scripts/setup installs it, CI runs on it)."""

from __future__ import annotations

import importlib.metadata as metadata
import shutil
import subprocess
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.deploy.lockfile import LOCK, Pin, read

ROOT = LOCK.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _unmet(requirements: list[str], pins: dict[str, Pin]) -> list[str]:
    unmet = []
    for line in requirements:
        requirement = Requirement(line)
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        pin = pins.get(canonicalize_name(requirement.name))
        if pin is None or not requirement.specifier.contains(pin.version, prereleases=True):
            unmet.append(f"{line} (locked: {pin.version if pin else 'nothing'})")
    return unmet


def test_every_pin_carries_its_hashes() -> None:
    for name in ("build.txt", "runtime.txt", "dev.txt"):
        pins = read(name)
        assert pins, f"requirements/{name} pins nothing"
        assert [pin.name for pin in pins.values() if not pin.hashes] == [], name


def test_the_runtime_and_build_sets_are_the_dev_sets_own_pins() -> None:
    dev = read("dev.txt")
    for name in ("runtime.txt", "build.txt"):
        differ = {
            pin.name: (pin.version, dev[pin.name].version if pin.name in dev else None)
            for pin in read(name).values()
            if pin.name not in dev or dev[pin.name].version != pin.version
        }
        assert differ == {}, f"requirements/{name} differs from dev.txt: run scripts/lock"


def test_the_lock_meets_every_range_in_pyproject() -> None:
    runtime, dev = read("runtime.txt"), read("dev.txt")
    assert _unmet(PROJECT["dependencies"], runtime) == []
    assert _unmet(PROJECT["dependencies"], dev) == []
    assert _unmet(PROJECT["optional-dependencies"]["dev"], dev) == []
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    assert _unmet(build, read("build.txt")) == []


def test_the_runtime_set_holds_only_what_the_package_needs() -> None:
    dev_only = {
        canonicalize_name(Requirement(r).name) for r in PROJECT["optional-dependencies"]["dev"]
    }
    assert set(read("runtime.txt")) & dev_only == set()


def test_this_environment_is_the_lock() -> None:
    """What scripts/setup installed: every pin that applies here, at its version."""
    wrong = {}
    for pin in read("dev.txt").values():
        if not pin.applies():
            continue
        try:
            installed = metadata.version(pin.name)
        except metadata.PackageNotFoundError:
            installed = "missing"
        if installed != pin.version:
            wrong[pin.name] = f"{installed}, locked {pin.version}"
    assert wrong == {}, "run scripts/setup: it installs requirements/dev.txt"


def test_lock_check_fails_once_pyproject_changes(tmp_path: Path) -> None:
    for part in ("pyproject.toml", "requirements", "scripts/lock"):
        source, copy = ROOT / part, tmp_path / part
        copy.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, copy)
        else:
            shutil.copy2(source, copy)
    check = [str(tmp_path / "scripts" / "lock"), "--check"]
    assert subprocess.run(check, capture_output=True, timeout=60).returncode == 0

    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"orjson>=3.9,<4"', '"orjson>=3.10,<4"'))
    failed = subprocess.run(check, capture_output=True, text=True, timeout=60)
    assert failed.returncode == 1
    assert "run scripts/lock" in failed.stderr
