"""The lock (requirements/*.txt, compiled by scripts/lock) read back: each pin's name,
version, marker and hashes, for the tests that hold the lock, pyproject.toml and what is
installed to one another."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from packaging.markers import Marker
from packaging.utils import canonicalize_name

__all__ = ["LOCK", "Pin", "read"]

LOCK = Path(__file__).resolve().parents[2] / "requirements"
_PIN = re.compile(
    r"^(?P<name>[A-Za-z0-9._-]+)(\[[^\]]*\])?"  # a name, its extras
    r"==(?P<version>[^ ;\\]+)"
    r"(\s*;\s*(?P<marker>[^\\]+?))?\s*\\?$"  # a marker, the line's continuation
)


@dataclass(frozen=True)
class Pin:
    name: str  # canonical (PEP 503)
    version: str
    marker: Marker | None
    hashes: tuple[str, ...]

    def applies(self, environment: dict[str, str] | None = None) -> bool:
        """Whether pip installs it where ``environment`` (PEP 508 marker values) holds;
        here when None."""
        return self.marker is None or self.marker.evaluate(environment)


def read(name: str) -> dict[str, Pin]:
    """``requirements/NAME``'s pins by canonical name."""
    pins: dict[str, Pin] = {}
    current: dict[str, object] | None = None
    hashes: list[str] = []

    def close() -> None:
        if current is not None:
            pin = Pin(hashes=tuple(hashes), **current)  # type: ignore[arg-type]
            pins[pin.name] = pin

    for line in (LOCK / name).read_text().splitlines():
        found = _PIN.match(line)
        if found:
            close()
            marker = found["marker"]
            current = {
                "name": canonicalize_name(found["name"]),
                "version": found["version"],
                "marker": Marker(marker.strip()) if marker else None,
            }
            hashes = []
        elif line.strip().startswith("--hash=sha256:"):
            hashes.append(line.strip().removeprefix("--hash=sha256:").rstrip(" \\"))
    close()
    return pins
