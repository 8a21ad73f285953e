from __future__ import annotations

import pytest

from services.gateway.schema import Schema, SchemaError

MOVE = Schema(
    {
        "type": "object",
        "properties": {
            "type": {"const": "move"},
            "id": {"type": "string", "minLength": 1, "maxLength": 4},
            "slot": {"type": "integer", "minimum": 0, "maximum": 9},
            "t": {"type": "number"},
            "tags": {"type": "array", "items": {"$ref": "#/$defs/tag"}, "maxItems": 2},
            "held": {"type": ["integer", "null"]},
            "from": {"enum": ["stock", "discard", None]},
            "token": {"type": "string", "pattern": "[0-9a-f]{4}"},
        },
        "required": ["type", "id"],
        "additionalProperties": False,
        "$defs": {"tag": {"type": "string", "maxLength": 3}},
    }
)


def test_a_valid_message_has_no_error() -> None:
    message = {
        "type": "move",
        "id": "a1",
        "slot": 3,
        "t": 1.5,
        "tags": ["x", "yz"],
        "held": None,
        "from": "stock",
        "token": "00af",
    }
    assert MOVE.error(message) is None


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ({"type": "move"}, "id: missing"),
        ({"type": "move", "id": "a", "seat": 1}, "seat: unknown field"),
        ({"type": "mov", "id": "a"}, "type: must be 'move'"),
        ({"type": "move", "id": ""}, "id: shorter than 1"),
        ({"type": "move", "id": "abcde"}, "id: longer than 4"),
        ({"type": "move", "id": 7}, "id: not a string"),
        ({"type": "move", "id": "a", "slot": True}, "slot: not an integer"),
        ({"type": "move", "id": "a", "slot": 1.0}, "slot: not an integer"),
        ({"type": "move", "id": "a", "slot": 10}, "slot: above 9"),
        ({"type": "move", "id": "a", "slot": -1}, "slot: below 0"),
        ({"type": "move", "id": "a", "t": False}, "t: not a number"),
        ({"type": "move", "id": "a", "tags": ["long"]}, "tags[0]: longer than 3"),
        ({"type": "move", "id": "a", "tags": ["a", "b", "c"]}, "tags: more than 2 items"),
        ({"type": "move", "id": "a", "held": "3"}, "held: not an integer or a null"),
        ({"type": "move", "id": "a", "from": "deck"}, "from: must be one of"),
        ({"type": "move", "id": "a", "token": "00AF"}, "token: not in the expected form"),
        ({"type": "move", "id": "a", "token": "00af0"}, "token: not in the expected form"),
        (["type", "move"], "message: not an object"),
    ],
)
def test_each_problem_is_named_with_its_path(message: object, problem: str) -> None:
    error = MOVE.error(message)
    assert error is not None
    assert error.startswith(problem)


def test_a_boolean_is_not_equal_to_a_number_constant() -> None:
    assert Schema({"const": 1}).error(True) is not None
    assert Schema({"enum": [0]}).error(False) is not None
    assert Schema({"const": 1}).error(1) is None


def test_a_keyword_the_validator_does_not_implement_is_refused() -> None:
    with pytest.raises(SchemaError, match="oneOf"):
        Schema({"type": "object", "properties": {"a": {"oneOf": []}}})


def test_a_reference_outside_the_definitions_is_refused() -> None:
    with pytest.raises(SchemaError, match="ref"):
        Schema({"$ref": "#/$defs/missing"})
    with pytest.raises(SchemaError, match="ref"):
        Schema({"$ref": "https://example.com/schema"})


def test_a_type_the_validator_does_not_know_is_refused_when_compiled() -> None:
    with pytest.raises(SchemaError, match="strnig"):
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
