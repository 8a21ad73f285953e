"""A small, fast validator for the subset of JSON Schema the protocol's schemas use.

Keywords: ``type`` (a name or a list of names), ``const``, ``enum``, ``properties``,
``required``, ``additionalProperties`` (``false`` or a schema), ``items``,
``minItems``/``maxItems``, ``minLength``/``maxLength``, ``pattern`` (whole-string),
``minimum``/``maximum``, and ``$ref`` to ``#/$defs/NAME``. Annotations (``$schema``,
``$id``, ``title``, ``description``, ``$comment``, ``$defs``) are ignored. Any other
keyword, or a ``type`` name other than JSON Schema's seven, is refused when a schema is
compiled, so a schema never silently means less than it says. As in JSON Schema,
``true``/``false`` are not numbers; unlike it, ``1.0`` is not an ``integer`` (JSON from
our clients never needs that).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import partial
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


Problem = tuple[str, str, bool]
"""Where in the value (``.name`` and ``[i]`` steps from the node checked), what is wrong,
and whether it is about a field (``missing``, ``unknown field``: named by its path even
when that is empty) rather than a value (an empty path is the whole ``message``)."""
Check = Callable[[Any], Problem | None]

_TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
}


class Schema:
    """One compiled schema: ``Schema(doc).error(value)`` is ``None`` or the first problem found.

    Each node becomes a closure that runs only the keywords it has; a path is spelled
    out only for the problem reported, so a valid message costs no string work."""

    def __init__(self, doc: Mapping[str, Any]) -> None:
        self._defs: Mapping[str, Any] = doc.get("$defs", {})
        self._check(doc)
        for sub in self._defs.values():
            self._check(sub)
        self._compiled: dict[str, Check] = {}
        for name, sub in self._defs.items():
            self._compiled[name] = self._compile(sub)
        self._root = self._compile(doc)

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
        kind = node.get("type")
        for name in [kind] if isinstance(kind, str) else kind or ():
            if name not in _TYPE_TESTS:
                raise SchemaError(f"unknown type {name!r}")
        for sub in node.get("properties", {}).values():
            self._check(sub)
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), Mapping):
                self._check(node[key])

    def error(self, value: Any) -> str | None:
        """The first way ``value`` breaks the schema (``"move.slot: not an integer"``) or None."""
        problem = self._root(value)
        if problem is None:
            return None
        steps, what, of_field = problem
        where = steps[1:] if steps.startswith(".") else steps
        return f"{where or ('' if of_field else 'message')}: {what}"

    def _compile(self, node: Mapping[str, Any]) -> Check:
        """The closure checking ``node``: its own keywords in the order JSON Schema's
        meaning needs them ($ref, type, const, enum), then those of the value's kind."""
        steps: list[Check] = []
        ref = node.get("$ref")
        if ref is not None:
            steps.append(partial(_by_name, self._compiled, ref[8:]))  # defs may recur
        kind = node.get("type")
        if kind is not None:
            names = [kind] if isinstance(kind, str) else list(kind)
            steps.append(
                partial(
                    _typed,
                    tuple(_TYPE_TESTS[n] for n in names),
                    f"not {' or '.join(map(_article, names))}",
                )
            )
        if "const" in node:
            steps.append(partial(_const, node["const"], f"must be {node['const']!r}"))
        if "enum" in node:
            options = tuple(node["enum"])
            steps.append(partial(_enum, options, f"must be one of {', '.join(map(str, options))}"))
        string = self._string(node)
        number = self._number(node)
        obj = self._object(node)
        array = self._array(node)

        def check(value: Any) -> Problem | None:
            for step in steps:
                problem = step(value)
                if problem is not None:
                    return problem
            if isinstance(value, str):
                return None if string is None else string(value)
            if isinstance(value, int | float) and not isinstance(value, bool):
                return None if number is None else number(value)
            if isinstance(value, dict):
                return None if obj is None else obj(value)
            if isinstance(value, list):
                return None if array is None else array(value)
            return None

        return check

    def _string(self, node: Mapping[str, Any]) -> Check | None:
        low, high, pattern = node.get("minLength"), node.get("maxLength"), node.get("pattern")
        if low is None and high is None and pattern is None:
            return None
        compiled = re.compile(pattern) if pattern is not None else None

        def string(value: str) -> Problem | None:
            if low is not None and len(value) < low:
                return "", f"shorter than {low}", False
            if high is not None and len(value) > high:
                return "", f"longer than {high}", False
            if compiled is not None and compiled.fullmatch(value) is None:
                return "", "not in the expected form", False
            return None

        return string

    def _number(self, node: Mapping[str, Any]) -> Check | None:
        low, high = node.get("minimum"), node.get("maximum")
        if low is None and high is None:
            return None

        def number(value: float) -> Problem | None:
            if low is not None and value < low:
                return "", f"below {low}", False
            if high is not None and value > high:
                return "", f"above {high}", False
            return None

        return number

    def _object(self, node: Mapping[str, Any]) -> Check | None:
        props = {name: self._compile(sub) for name, sub in node.get("properties", {}).items()}
        required = tuple(node.get("required", ()))
        extra = node.get("additionalProperties", True)
        if extra is True and not props and not required:
            return None
        extra_check = self._compile(extra) if isinstance(extra, Mapping) else None

        def obj(value: dict[str, Any]) -> Problem | None:
            for name in required:
                if name not in value:
                    return f".{name}", "missing", True
            for name, item in value.items():
                sub = props.get(name)
                if sub is None:
                    if extra is False:
                        return f".{name}", "unknown field", True
                    if extra_check is None:
                        continue
                    sub = extra_check
                problem = sub(item)
                if problem is not None:
                    return f".{name}{problem[0]}", problem[1], problem[2]
            return None

        return obj

    def _array(self, node: Mapping[str, Any]) -> Check | None:
        low, high = node.get("minItems"), node.get("maxItems")
        items = node.get("items")
        each = self._compile(items) if isinstance(items, Mapping) else None
        if low is None and high is None and each is None:
            return None

        def array(value: list[Any]) -> Problem | None:
            if low is not None and len(value) < low:
                return "", f"fewer than {low} items", False
            if high is not None and len(value) > high:
                return "", f"more than {high} items", False
            if each is not None:
                for i, item in enumerate(value):
                    problem = each(item)
                    if problem is not None:
                        return f"[{i}]{problem[0]}", problem[1], problem[2]
            return None

        return array


def _by_name(compiled: Mapping[str, Check], name: str, value: Any) -> Problem | None:
    return compiled[name](value)


def _typed(tests: tuple[Callable[[Any], bool], ...], what: str, value: Any) -> Problem | None:
    for test in tests:
        if test(value):
            return None
    return "", what, False


def _const(expected: Any, what: str, value: Any) -> Problem | None:
    return None if _same(value, expected) else ("", what, False)


def _enum(options: tuple[Any, ...], what: str, value: Any) -> Problem | None:
    return None if any(_same(value, option) for option in options) else ("", what, False)


def _article(name: str) -> str:
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``1 == True`` is false in JSON."""
    return type(a) is type(b) and a == b
