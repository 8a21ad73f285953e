"""The frames of the protocol fuzz (``tests/system/fuzz.py``): Hypothesis strategies built
from the protocol's JSON schemas (``services/gateway/schemas/``: every client message type,
valid and mutated: fields dropped, unknown or mistyped, integers at and past their bounds,
long or odd strings), plus byte-level garbage: random bytes, truncated and spliced JSON,
binary frames, frames over ``MAX_FRAME_BYTES`` and over ``WS_MAX_SIZE``, and text that is
not UTF-8. ``frame_pool`` draws a pool of distinct frames, which the fuzz replays in a
seeded random order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

import orjson
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from services.gateway.protocol import CLIENT_TYPES

MAX_FRAME = 4096  # MAX_FRAME_BYTES
WS_MAX = 65536  # WS_MAX_SIZE
# Close codes a fuzz connection may see: bad UTF-8, abuse (not here), too big, busy/slow.
CLOSES = {1007, 1008, 1009, 1013}
INT_EDGES = (
    -(2**63) - 1,
    -(2**63),
    -(2**31) - 1,
    -(2**31),
    -1,
    0,
    1,
    2**31 - 1,
    2**31,
    2**53 + 1,
    2**63 - 1,
    2**63,
    2**64 - 1,
    2**64,
    10**30,
)


# -- Hypothesis strategies from the JSON schemas ---------------------------------------------


def _schemas() -> dict[str, dict[str, Any]]:
    folder = resources.files("services.gateway") / "schemas"
    return {
        kind: json.loads((folder / f"{kind}.json").read_text(encoding="utf-8"))
        for kind in CLIENT_TYPES
    }


JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from(INT_EDGES),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
ODD_TEXT = st.one_of(
    st.text(max_size=30),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=30),
    st.sampled_from(
        [
            "",
            " ",
            "Ann",
            "👨‍👩‍👧",
            "\u200d",
            "\u202eevil",
            "\ud800",  # a lone surrogate: a \uD800 escape in ASCII JSON, bad UTF-8 raw
            "a\udfffb",
            "A\x00",
            "x" * 21,
            "x" * 65,
            "ABCDEF",
            "abcdef",
            "0" * 32,
            "F" * 32,
            "stock",
            "discard",
            "draw",
            "place",
            "throw",
            "repair",
        ]
    ),
)


def schema_strategy(node: dict[str, Any], defs: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values that match one node of a schema (the subset ``services/gateway/schema.py`` reads)."""
    if "$ref" in node:
        return schema_strategy(
            {**defs[node["$ref"][8:]], **{k: v for k, v in node.items() if k != "$ref"}}, defs
        )
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    kind = node.get("type")
    kinds = [kind] if isinstance(kind, str) else list(kind or [])
    if not kinds:
        kinds = ["object"] if "properties" in node else ["integer"] if "minimum" in node else []
    if not kinds:
        return JSON_VALUES
    return st.one_of([_typed(node, name, defs) for name in kinds])


def _typed(node: dict[str, Any], kind: str, defs: dict[str, Any]) -> st.SearchStrategy[Any]:
    if kind == "object":
        props = node.get("properties", {})
        required = {
            k: schema_strategy(v, defs) for k, v in props.items() if k in node.get("required", ())
        }
        optional = {k: schema_strategy(v, defs) for k, v in props.items() if k not in required}
        fixed = st.fixed_dictionaries(required, optional=optional)
        if node.get("additionalProperties", True) is False:
            return fixed
        extra = st.dictionaries(st.text(max_size=10), JSON_VALUES, max_size=2)
        return st.builds(lambda a, b: {**b, **a}, fixed, extra)
    if kind == "string":
        if "pattern" in node:
            return st.from_regex(node["pattern"], fullmatch=True)
        low, high = node.get("minLength", 0), node.get("maxLength", 64)
        return st.text(min_size=low, max_size=high) | ODD_TEXT
    if kind == "integer":
        low, high = node.get("minimum"), node.get("maximum")
        return st.integers(low, high) | st.sampled_from(
            [x for x in INT_EDGES if _within(x, low, high)] or [0]
        )
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**63), 2**64 - 1)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        items = schema_strategy(node.get("items", {}), defs)
        return st.lists(items, min_size=node.get("minItems", 0), max_size=node.get("maxItems", 5))
    raise ValueError(f"no strategy for type {kind!r}")


def _within(x: int, low: int | None, high: int | None) -> bool:
    return (low is None or x >= low) and (high is None or x <= high)


@st.composite
def _mutated(draw: st.DrawFn, message: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    """A valid message, then one way of breaking it (or none)."""
    out = dict(draw(message))
    how = draw(st.sampled_from(["keep", "drop", "add", "retype", "edge", "nest"]))
    keys = sorted(k for k in out if k != "type")
    if how == "drop" and out:
        out.pop(draw(st.sampled_from(sorted(out))))
    elif how == "add":
        out[draw(st.sampled_from(["seat", "token", "x", "id", "version", "move", "", "type"]))] = (
            draw(JSON_VALUES)
        )
    elif how == "retype" and keys:
        out[draw(st.sampled_from(keys))] = draw(JSON_VALUES)
    elif how == "edge" and keys:
        out[draw(st.sampled_from(keys))] = draw(st.sampled_from(INT_EDGES))
    elif how == "nest" and isinstance(out.get("move"), dict):
        out["move"] = {
            **out["move"],
            draw(st.sampled_from(["slot", "from", "act", "seat", "go_out"])): draw(JSON_VALUES),
        }
    return out


def client_messages() -> st.SearchStrategy[dict[str, Any]]:
    """Every client message type from its schema, valid or broken in one way."""
    parts = []
    for doc in _schemas().values():
        valid = schema_strategy(doc, doc.get("$defs", {}))
        parts.append(valid | _mutated(valid))
    return st.one_of(parts)


# -- frames: messages encoded, and byte-level garbage ------------------------------------------


@dataclass(frozen=True, slots=True)
class Frame:
    """One WebSocket frame to send; ``closes``: the close code it must get (0: none)."""

    data: bytes
    binary: bool = False
    closes: int = 0


def encode(message: Any, how: str) -> bytes:
    if how == "ascii":
        return json.dumps(
            message, ensure_ascii=True
        ).encode()  # \\uXXXX escapes, lone surrogates too
    try:
        return orjson.dumps(message)
    except TypeError:  # an integer past 64 bits: Python's json writes it
        return json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")


@st.composite
def frames(draw: st.DrawFn) -> Frame:
    """One frame: most are messages, the rest garbage of every kind."""
    kind = draw(
        st.sampled_from(
            ["message"] * 6
            + ["bytes", "truncated", "binary", "big", "huge", "bad_utf8", "deep", "json", "escape"]
        )
    )
    if kind == "message":
        data = encode(draw(client_messages()), draw(st.sampled_from(["orjson", "ascii"])))
        return Frame(data, closes=_utf8_close(data))
    if kind == "bytes":
        data = draw(st.binary(max_size=200))
        return Frame(data, closes=_utf8_close(data))
    if kind == "truncated":
        data = encode(draw(client_messages()), "orjson")
        cut = draw(st.integers(0, max(0, len(data) - 1)))
        return Frame(data[:cut], closes=_utf8_close(data[:cut]))
    if kind == "binary":
        return Frame(encode(draw(client_messages()), "orjson"), binary=True)
    if kind == "big":  # read, then refused as over MAX_FRAME_BYTES
        pad = "é" * draw(st.integers(MAX_FRAME // 2, MAX_FRAME * 4))
        return Frame(orjson.dumps({"type": "ping", "pad": pad}))
    if kind == "huge":  # not read at all: 1009
        return Frame(b'{"type": "ping", "pad": "' + b"x" * (WS_MAX + 10) + b'"}', closes=1009)
    if kind == "bad_utf8":  # a lone surrogate, an overlong form, a stray byte: 1007
        bad = draw(
            st.sampled_from(
                [b"\xed\xa0\x80", b"\xc0\xaf", b"\xff", b"\xe2\x82", b"\xf4\x90\x80\x80"]
            )
        )
        good = encode(draw(client_messages()), "orjson")
        at = draw(st.integers(0, len(good)))
        return Frame(good[:at] + bad + good[at:], closes=1007)
    if kind == "escape":  # a lone surrogate as a JSON escape: UTF-8 text, not a JSON string
        message = draw(client_messages())
        key = draw(st.sampled_from(sorted(message) or ["name"]))
        message[key] = draw(st.sampled_from(["\ud800", "a\udfffb", "\udbff\udbff"]))
        return Frame(encode(message, "ascii"))
    if kind == "deep":
        depth = draw(st.integers(100, 3000))
        return Frame(b"[" * depth + b"]" * depth)
    return Frame(encode(draw(JSON_VALUES), "orjson"))


def _utf8_close(data: bytes) -> int:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return 1007
    return 0


def frame_pool(size: int, seed: int = 0) -> list[Frame]:
    """``size`` frames drawn by Hypothesis (reproducible for a seed)."""
    pool: list[Frame] = []

    @hypothesis_seed(seed)
    @settings(
        max_examples=size,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(frames())
    def collect(frame: Frame) -> None:
        pool.append(frame)

    collect()
    return pool
