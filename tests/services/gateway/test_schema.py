"""The protocol's schemas as the gateway checks them (services/gateway/schema.py compiles them
with fastjsonschema): what a client is told for each kind of problem, and the readings the
protocol needs where JSON Schema's own differ."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services._gen.rackem.v1 import table_pb2 as tb
from services.gateway.messages import move_to_pb
from services.gateway.protocol import ProtocolError, parse, schemas
from services.gateway.schema import Schema, SchemaError

LIMIT = 4096
MOVE = {"type": "move", "move": {"act": "place", "slot": 3}, "id": "m1", "version": 7}


def refusal(message: Any) -> ProtocolError:
    with pytest.raises(ProtocolError) as caught:
        parse(json.dumps(message), LIMIT)
    assert caught.value.code == "bad_request"
    return caught.value


def with_move(**fields: Any) -> dict[str, Any]:
    return {**MOVE, "move": {**MOVE["move"], **fields}}


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ({"type": "move", "move": {"act": "draw"}}, "id: missing"),
        ({**MOVE, "move": {}}, "move.act: missing"),
        (with_move(seat=1), "move.seat: unknown field"),
        ({**MOVE, "seat": 1}, "seat: unknown field"),
        (with_move(slot="3"), "move.slot: not an integer"),
        (with_move(slot=True), "move.slot: not an integer"),
        (with_move(slot=3.0), "move.slot: not an integer"),  # protobuf's int32 refuses a float
        (with_move(slot=2**31), "move.slot: above 2147483647"),
        (with_move(go_out=0), "move.go_out: not a boolean"),
        ({**MOVE, "version": -1}, "version: below 0"),
        ({**MOVE, "version": 7.0}, "version: not an integer"),
        ({**MOVE, "id": ""}, "id: shorter than 1"),
        ({**MOVE, "id": "x" * 65}, "id: longer than 64"),
        ({**MOVE, "move": [3]}, "move: not an object"),
        ({"type": "hello", "version": 1, "client": 7}, "client: not a string"),
        ({"type": "ping", "t": "now"}, "t: not a number"),
        ({"type": "ping", "t": False}, "t: not a number"),
        ({"type": "quick_match", "name": "Ann", "players": 5}, "players: above 4"),
        ({"type": "create_table", "name": "Ann", "rules": [2]}, "rules: not an object"),
        (
            {"type": "create_table", "name": "Ann", "rules": {"target": -(2**31) - 1}},
            "rules.target: below -2147483648",
        ),
        (
            {"type": "create_table", "name": "Ann", "level": "expert"},
            "level: must be one of easy, medium, hard",
        ),
    ],
)
def test_each_problem_is_a_bad_request_named_by_its_path(message: Any, problem: str) -> None:
    assert refusal(message).message == problem


def test_a_valid_frame_of_each_kind_passes() -> None:
    for message in (
        MOVE,
        {"type": "move", "move": {"act": "draw", "from": "stock"}, "id": "m2"},
        {
            "type": "move",
            "move": {"act": "throw", "go_out": False},
            "id": "m3",
            "version": 2**63 - 1,
        },
        {"type": "hello", "version": 1, "client": "x" * 64},
        {"type": "ping", "t": 1.5},
        {
            "type": "create_table",
            "name": "Ann",
            "rules": {"players": 2, "bonus": True},
            "level": "easy",
        },
    ):
        assert parse(json.dumps(message), LIMIT) == message


def test_server_messages_are_checked_in_depth_by_the_same_schemas() -> None:
    """Arrays, ``$ref``s, ``null`` in a type, a whole-string pattern and a constant: what only
    the server's messages use, held by the tests that check what the server sends."""
    token = "0123456789abcdef" * 2
    seated = {"type": "seated", "token": token, "seat": 0, "code": "K7MX2Q", "table_id": "t1"}
    assert schemas()["seated"].error(seated) is None
    for bad in (token.upper(), token + "0", token + "\n", "x" + token):
        assert (
            schemas()["seated"].error({**seated, "token": bad}) == "token: not in the expected form"
        )
    assert schemas()["welcome"].error({"type": "welcome", "version": 2, "server": "s"}) == (
        "version: must be 1"
    )
    seat = {"seat": 0, "name": "Ann", "taken": True, "bot": False}
    lobby = {
        "type": "lobby",
        "code": "K7MX2Q",
        "table_id": "t1",
        "rules": {},
        "seats": [seat, {**seat, "seat": 4}],
        "creator_seat": 0,
        "you": 0,
        "status": "waiting",
        "fill_deadline_ms": 0,
        "public": True,
        "level": "easy",
        "spectators": "off",
        "rated": False,
        "daily": "",
    }
    assert schemas()["lobby"].error(lobby) == "rules.players: missing"
    rules = {
        "players": 2,
        "target": 500,
        "bonus": False,
        "partners": False,
        "run_to_go_out": 3,
        "descending": False,
        "repair_token": False,
        "visible_center": False,
        "reshuffle_on_recycle": False,
        "max_recycles": 0,
        "turn_cap": 0,
        "tiebreak": "coin",
    }
    assert schemas()["lobby"].error({**lobby, "rules": rules}) == (
        "rules.tiebreak: must be one of went_out, extra_round"
    )
    rules["tiebreak"] = "went_out"
    assert schemas()["lobby"].error({**lobby, "rules": rules}) == "seats[1].seat: above 3"


def test_a_boolean_is_not_equal_to_a_number_constant() -> None:
    assert Schema({"const": 1}).error(True) == "message: must be 1"
    assert Schema({"enum": [0, 2]}).error(False) is not None
    assert Schema({"const": 1}).error(1) is None


def test_a_keyword_outside_what_is_compiled_is_refused() -> None:
    with pytest.raises(SchemaError, match="oneOf"):
        Schema({"type": "object", "properties": {"a": {"oneOf": []}}})
    with pytest.raises(SchemaError, match="propertyNames"):  # draft 4 would ignore it
        Schema({"$defs": {"x": {"propertyNames": {}}}, "$ref": "#/$defs/x"})


def test_a_reference_outside_the_definitions_is_refused_never_fetched() -> None:
    with pytest.raises(SchemaError, match="ref"):
        Schema({"$ref": "#/$defs/missing"})
    with pytest.raises(SchemaError, match="ref"):
        Schema({"$ref": "https://example.com/schema"})


def test_a_type_json_schema_does_not_have_is_refused_when_compiled() -> None:
    with pytest.raises(ValueError, match="type"):
        Schema({"type": "object", "properties": {"a": {"type": ["null", "strnig"]}}})


def test_a_definition_may_refer_to_itself() -> None:
    tree = Schema(
        {
            "$ref": "#/$defs/node",
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                    "additionalProperties": False,
                }
            },
        }
    )
    assert tree.error({"kids": [{"kids": []}, {}]}) is None
    assert tree.error({"kids": [{"kids": [{"x": 1}]}]}) == "kids[0].kids[0].x: unknown field"


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)  # what orjson reads
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=4,
)


@settings(max_examples=300, deadline=None)
@given(field=st.sampled_from(["slot", "version"]), value=JSON)
def test_a_move_the_schema_lets_through_fits_its_protobuf_fields(field: str, value: Any) -> None:
    """The schemas' intent for the integers a move carries: whatever passes reaches the table
    request without a TypeError or ValueError (which the gateway could only answer
    ``internal``); the rest is a ``bad_request``."""
    message = with_move(slot=value) if field == "slot" else {**MOVE, "version": value}
    try:
        checked = parse(json.dumps(message), LIMIT)
    except ProtocolError as err:
        assert err.code == "bad_request"
        return
    move_to_pb(checked["move"])
    tb.SubmitMoveRequest().expected_version = checked["version"]
