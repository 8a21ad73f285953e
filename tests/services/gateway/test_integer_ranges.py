"""Every integer the protocol takes is bounded at its schema by what its destination holds:
past it, a clear ``bad_request``, never ``internal``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from importlib import resources
from typing import Any

import pytest

from rackem.client import Client
from services._gen.rackem.v1 import game_pb2 as pb
from services._gen.rackem.v1 import table_pb2 as tb
from services.common.running import Running
from services.gateway.protocol import CLIENT_TYPES, ProtocolError, encode, parse, schemas

from .conftest import ws_url

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)
LIMIT = 4096


def integer_nodes(node: Any, defs: dict[str, Any], path: str) -> Iterator[tuple[str, Any]]:
    """Every (path, schema node) of a schema that accepts an integer."""
    if not isinstance(node, dict):
        return
    target = defs[node["$ref"][8:]] if "$ref" in node else node
    kind = target.get("type", node.get("type"))
    kinds = [kind] if isinstance(kind, str) else kind or []
    if "integer" in kinds or ("minimum" in target and "maximum" in target):
        yield path, target
    for name, sub in node.get("properties", {}).items():
        yield from integer_nodes(sub, defs, f"{path}.{name}")


def test_every_integer_a_client_sends_has_both_bounds() -> None:
    folder = resources.files("services.gateway") / "schemas"
    found = []
    for kind in CLIENT_TYPES:
        doc = json.loads((folder / f"{kind}.json").read_text(encoding="utf-8"))
        for path, node in integer_nodes(doc, doc.get("$defs", {}), kind):
            found.append(path)
            assert "minimum" in node and "maximum" in node, path
    assert "move.version" in found and "move.move.slot" in found
    assert "create_table.rules.target" in found and "hello.version" in found


def _set_version(value: int) -> None:
    tb.SubmitMoveRequest().expected_version = value


def _set_slot(value: int) -> None:
    pb.Move().slot = value


def _set_target(value: int) -> None:
    pb.Rules().target = value


def _frame(kind: str, field: str, value: int) -> dict[str, Any]:
    if kind == "move" and field == "version":
        return {"type": "move", "move": {"act": "throw"}, "id": "m1", "version": value}
    if kind == "move":
        return {"type": "move", "move": {"act": "place", "slot": value}, "id": "m1"}
    return {"type": "create_table", "name": "Ann", "rules": {"target": value}}


CASES: list[tuple[str, str, tuple[int, int], Callable[[int], None]]] = [
    ("move", "version", (0, INT64[1]), _set_version),
    ("move", "slot", INT32, _set_slot),
    ("create_table", "target", INT32, _set_target),
]


@pytest.mark.parametrize(("kind", "field", "bounds", "store"), CASES)
def test_each_bound_is_what_the_protobuf_field_holds(
    kind: str, field: str, bounds: tuple[int, int], store: Callable[[int], None]
) -> None:
    low, high = bounds
    for value in (low, high):
        parse(encode(_frame(kind, field, value)).decode(), LIMIT)
        store(value)
    for value in (low - 1, high + 1):
        with pytest.raises(ProtocolError) as caught:
            parse(encode(_frame(kind, field, value)).decode(), LIMIT)
        assert caught.value.code == "bad_request"
        assert field in caught.value.message


def test_hello_version_is_bounded() -> None:
    assert schemas()["hello"].error({"type": "hello", "version": 2**63}) is not None
    assert schemas()["hello"].error({"type": "hello", "version": 7}) is None


async def test_a_version_past_int64_is_a_bad_request_at_a_live_table(system: Running) -> None:
    async with Client(ws_url(system)) as client:
        await client.create_table("Ann", {"target": 50}, level="easy", start_now=True)
        view = await client.wait_for("view")
        move = {"act": "draw", "from": "stock"}
        await client.send({"type": "move", "move": move, "id": "big", "version": 2**63})
        refusal = await client.wait_for("error", errors=False)
        assert (refusal["code"], refusal["id"]) == ("bad_request", "big")
        await client.send({"type": "move", "move": move, "id": "top", "version": 2**63 - 1})
        refusal = await client.wait_for("error", errors=False)
        assert (refusal["code"], refusal["id"]) == ("stale_version", "top")
        assert view["version"] < 2**63 - 1
