"""The protocol's JSON Schemas, compiled to Python by fastjsonschema, and a problem in words.

``Schema(doc).error(value)`` is ``None`` or the first problem found, named by its path
(``"move.slot: not an integer"``, ``"id: missing"``, ``"move.seat: unknown field"``): the
``bad_request`` message a client reads (what it costs: docs/performance.md,
bench/frame_bench.py).

Set here on purpose, each held by tests/services/gateway/test_schema.py:

- **An integer is never a float.** Since draft 6 JSON Schema counts ``1.0`` as an
  integer, but every integer a client sends goes into a protobuf integer field, which
  refuses a float (the gateway could only answer ``internal``). So the schemas are
  compiled by fastjsonschema's draft 4 reading (chosen by ``$schema``; ``integer`` is an
  ``int``, never a ``bool``), with ``const`` written as the one-value ``enum`` it means.
- **Only keywords draft 4 implements.** It ignores any other, so one outside
  ``_KEYWORDS``, or a ``$ref`` other than ``#/$defs/NAME`` (never fetched), is refused
  when a schema is compiled: a schema never silently means less than it says.
- **No ``$id``**: with a relative one (``rackem/v1/move``) fastjsonschema 2.22 resolves
  ``#/$defs/…`` against it wrongly while it writes its errors.

``pattern`` is a search, as in JSON Schema: anchor it (``^…$``) to mean the whole string.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import fastjsonschema

__all__ = ["Schema", "SchemaError"]

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
_ANNOTATIONS = frozenset({"$schema", "$id", "title", "description", "$comment", "$defs"})
_DRAFT4 = "http://json-schema.org/draft-04/schema#"


class SchemaError(ValueError):
    """A schema with a keyword this module does not compile, or a ``$ref`` outside its ``$defs``."""


class Schema:
    """One schema, compiled once; ``error(value)`` checks a value against it."""

    def __init__(self, doc: Mapping[str, Any]) -> None:
        defs = doc.get("$defs", {})
        draft4 = _draft4(doc, defs)
        draft4["$schema"] = _DRAFT4
        if defs:
            draft4["$defs"] = {name: _draft4(sub, defs) for name, sub in defs.items()}
        self._validate = fastjsonschema.compile(draft4, use_default=False, use_formats=False)

    def error(self, value: Any) -> str | None:
        """The first way ``value`` breaks the schema, or None."""
        try:
            self._validate(value)
        except fastjsonschema.JsonSchemaValueException as err:
            return _words(err)
        return None


def _draft4(node: Any, defs: Mapping[str, Any]) -> dict[str, Any]:
    """``node`` as draft 4 spells it, keyword by keyword (checked), without annotations."""
    if not isinstance(node, Mapping):
        raise SchemaError("a schema must be an object")
    unknown = set(node) - _KEYWORDS - _ANNOTATIONS
    if unknown:
        raise SchemaError(f"unsupported keyword {sorted(unknown)[0]!r}")
    ref = node.get("$ref")
    if ref is not None and (
        not isinstance(ref, str) or not ref.startswith("#/$defs/") or ref[8:] not in defs
    ):
        raise SchemaError(f"unresolvable $ref {ref!r}")
    out = {key: value for key, value in node.items() if key in _KEYWORDS}
    if "const" in out:
        if "enum" in out:
            raise SchemaError("const and enum on one node")
        out["enum"] = [out.pop("const")]
    if "properties" in out:
        out["properties"] = {name: _draft4(sub, defs) for name, sub in out["properties"].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), Mapping):
            out[key] = _draft4(out[key], defs)
    return out


def _words(err: fastjsonschema.JsonSchemaValueException) -> str:
    """fastjsonschema's error as the protocol says it: ``path: what``."""
    name = err.name or "data"
    where = name[5:] if name.startswith("data.") else name[4:]  # "data[0]" -> "[0]"
    node: Mapping[str, Any] = err.definition if isinstance(err.definition, Mapping) else {}
    if err.rule == "required":
        field = next((key for key in node["required"] if key not in err.value), "")
        return f"{where}.{field}: missing" if where else f"{field}: missing"
    if err.rule == "additionalProperties":
        field = next((key for key in err.value if key not in node.get("properties", {})), "")
        return f"{where}.{field}: unknown field" if where else f"{field}: unknown field"
    return f"{where or 'message'}: {_what(err.rule, node)}"


_LIMITS = {
    "minLength": "shorter than {}",
    "maxLength": "longer than {}",
    "minimum": "below {}",
    "maximum": "above {}",
    "minItems": "fewer than {} items",
    "maxItems": "more than {} items",
}


def _what(rule: str | None, node: Mapping[str, Any]) -> str:
    if rule == "type":
        kinds = node["type"]
        names = [kinds] if isinstance(kinds, str) else kinds
        return "not " + " or ".join(f"an {n}" if n[0] in "aeiou" else f"a {n}" for n in names)
    if rule == "enum":
        options = node["enum"]
        if len(options) == 1:
            return f"must be {options[0]!r}"
        return f"must be one of {', '.join(map(str, options))}"
    if rule in _LIMITS:
        return _LIMITS[rule].format(node[rule])
    return "not in the expected form"  # pattern
