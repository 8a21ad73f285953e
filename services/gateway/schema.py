"""A small, fast validator for the subset of JSON Schema the protocol's schemas use.

Keywords: ``type`` (a name or a list of names), ``const``, ``enum``, ``properties``,
``required``, ``additionalProperties`` (``false`` or a schema), ``items``,
``minItems``/``maxItems``, ``minLength``/``maxLength``, ``pattern`` (whole-string),
``minimum``/``maximum``, and ``$ref`` to ``#/$defs/NAME``. Annotations (``$schema``,
``$id``, ``title``, ``description``, ``$comment``, ``$defs``) are ignored. Any other
keyword is refused when a schema is compiled, so a schema never silently means less
than it says. As in JSON Schema, ``true``/``false`` are not numbers; unlike it, ``1.0``
is not an ``integer`` (JSON from our clients never needs that).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["Schema", "SchemaError"]

_ANNOTATIONS = frozenset({"$schema", "$id", "title", "description", "$comment", "$defs"})
_KEYWORDS = frozenset(
    {
        "type",
        "const",
        "enum",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "$ref",
    }
)


class SchemaError(ValueError):
    """A schema that uses a keyword this validator does not implement, or a bad ``$ref``."""


def _is_type(value: Any, name: str) -> bool:
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    raise SchemaError(f"unknown type {name!r}")


class Schema:
    """One compiled schema: ``Schema(doc).error(value)`` is ``None`` or the first problem found."""

    def __init__(self, doc: Mapping[str, Any]) -> None:
        self._defs: Mapping[str, Any] = doc.get("$defs", {})
        self._patterns: dict[str, re.Pattern[str]] = {}
        self._check(doc)
        for sub in self._defs.values():
            self._check(sub)
        self._doc = doc

    def _check(self, node: Any) -> None:
        if not isinstance(node, Mapping):
            raise SchemaError("a schema must be an object")
        unknown = set(node) - _KEYWORDS - _ANNOTATIONS
        if unknown:
            raise SchemaError(f"unsupported keyword {sorted(unknown)[0]!r}")
        ref = node.get("$ref")
        if ref is not None and (
            not isinstance(ref, str) or not ref.startswith("#/$defs/") or ref[8:] not in self._defs
        ):
            raise SchemaError(f"unresolvable $ref {ref!r}")
        if "pattern" in node:
            self._patterns[node["pattern"]] = re.compile(node["pattern"])
        for sub in node.get("properties", {}).values():
            self._check(sub)
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), Mapping):
                self._check(node[key])

    def error(self, value: Any) -> str | None:
        """The first way ``value`` breaks the schema (``"move.slot: not an integer"``) or None."""
        return self._error(self._doc, value, "")

    def _error(self, node: Mapping[str, Any], value: Any, path: str) -> str | None:
        where = path or "message"
        ref = node.get("$ref")
        if ref is not None:
            problem = self._error(self._defs[ref[8:]], value, path)
            if problem is not None:
                return problem
        kind = node.get("type")
        if kind is not None:
            names = [kind] if isinstance(kind, str) else kind
            if not any(_is_type(value, name) for name in names):
                return f"{where}: not {' or '.join(map(_article, names))}"
        if "const" in node and not _same(value, node["const"]):
            return f"{where}: must be {node['const']!r}"
        if "enum" in node and not any(_same(value, option) for option in node["enum"]):
            return f"{where}: must be one of {', '.join(map(str, node['enum']))}"
        if isinstance(value, str):
            return self._string(node, value, where)
        if isinstance(value, int | float) and not isinstance(value, bool):
            if "minimum" in node and value < node["minimum"]:
                return f"{where}: below {node['minimum']}"
            if "maximum" in node and value > node["maximum"]:
                return f"{where}: above {node['maximum']}"
        elif isinstance(value, dict):
            return self._object(node, value, path)
        elif isinstance(value, list):
            return self._array(node, value, path, where)
        return None

    def _string(self, node: Mapping[str, Any], value: str, where: str) -> str | None:
        if "minLength" in node and len(value) < node["minLength"]:
            return f"{where}: shorter than {node['minLength']}"
        if "maxLength" in node and len(value) > node["maxLength"]:
            return f"{where}: longer than {node['maxLength']}"
        pattern = node.get("pattern")
        if pattern is not None and self._patterns[pattern].fullmatch(value) is None:
            return f"{where}: not in the expected form"
        return None

    def _object(self, node: Mapping[str, Any], value: dict[str, Any], path: str) -> str | None:
        props: Mapping[str, Any] = node.get("properties", {})
        for name in node.get("required", ()):
            if name not in value:
                return f"{_join(path, name)}: missing"
        extra = node.get("additionalProperties", True)
        for name, item in value.items():
            sub = props.get(name)
            if sub is None:
                if extra is False:
                    return f"{_join(path, name)}: unknown field"
                if extra is True:
                    continue
                sub = extra
            problem = self._error(sub, item, _join(path, name))
            if problem is not None:
                return problem
        return None

    def _array(
        self, node: Mapping[str, Any], value: list[Any], path: str, where: str
    ) -> str | None:
        if "minItems" in node and len(value) < node["minItems"]:
            return f"{where}: fewer than {node['minItems']} items"
        if "maxItems" in node and len(value) > node["maxItems"]:
            return f"{where}: more than {node['maxItems']} items"
        items = node.get("items")
        if isinstance(items, Mapping):
            for i, item in enumerate(value):
                problem = self._error(items, item, f"{path}[{i}]")
                if problem is not None:
                    return problem
        return None


def _article(name: str) -> str:
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``1 == True`` is false in JSON."""
    return type(a) is type(b) and a == b
