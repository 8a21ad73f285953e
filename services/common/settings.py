"""Typed settings read once, at the edge, from environment variables.

Each service declares a frozen dataclass of its settings; ``from_env`` fills it
from variables named like the fields in upper case (``redis_url`` ← ``REDIS_URL``).
"""

from __future__ import annotations

import dataclasses
import os
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

__all__ = ["SettingsError", "from_env"]

T = TypeVar("T")


class SettingsError(ValueError):
    """An environment variable that does not parse as its setting's type."""


def _parse(name: str, raw: str, kind: Any) -> Any:
    try:
        if kind is bool:
            lowered = raw.strip().lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off", ""):
                return False
            raise ValueError(raw)
        if kind is int:
            return int(raw)
        if kind is float:
            return float(raw)
        if kind in (tuple[str, ...], typing.Tuple[str, ...]):  # noqa: UP006
            return tuple(part.strip() for part in raw.split(",") if part.strip())
        return raw
    except ValueError:
        kind_name = getattr(kind, "__name__", str(kind))
        raise SettingsError(f"{name}={raw!r} is not a valid {kind_name}") from None


def from_env(cls: type[T], env: Mapping[str, str] | None = None, **overrides: Any) -> T:
    """Build settings ``cls`` from ``env`` (default ``os.environ``); ``overrides`` win."""
    env = os.environ if env is None else env
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    assert dataclasses.is_dataclass(cls)
    for field in dataclasses.fields(cls):
        if field.name in overrides:
            values[field.name] = overrides[field.name]
            continue
        raw = env.get(field.name.upper())
        if raw is None:
            continue
        kind = hints[field.name]
        if typing.get_origin(kind) is typing.Union or type(kind).__name__ == "UnionType":
            args = [a for a in typing.get_args(kind) if a is not type(None)]
            kind = args[0]
        values[field.name] = _parse(field.name.upper(), raw, kind)
    return cls(**values)
