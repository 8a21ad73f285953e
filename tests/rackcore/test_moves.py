from __future__ import annotations

import json
from typing import Any

import pytest

from rackcore import MalformedMoveError, Move


@pytest.mark.parametrize(
    ("move", "data"),
    [
        (Move.draw(1, "stock"), {"seat": 1, "act": "draw", "from": "stock"}),
        (Move.draw(0, "discard"), {"seat": 0, "act": "draw", "from": "discard"}),
        (Move.place(1, 3), {"seat": 1, "act": "place", "slot": 3}),
        (Move.place(0, 9, go_out=False), {"seat": 0, "act": "place", "slot": 9, "go_out": False}),
        (Move.throw(3), {"seat": 3, "act": "throw"}),
        (Move.throw(2, go_out=False), {"seat": 2, "act": "throw", "go_out": False}),
        (Move.repair(1, 8), {"seat": 1, "act": "repair", "slot": 8}),
    ],
)
def test_moves_round_trip_through_the_log_json(move: Move, data: dict[str, Any]) -> None:
    assert move.to_dict() == data
    assert Move.from_dict(json.loads(json.dumps(data))) == move


def test_by_is_recorded_but_not_part_of_a_moves_identity() -> None:
    move = Move.place(1, 3).with_by("cover")
    assert move.to_dict() == {"seat": 1, "act": "place", "slot": 3, "by": "cover"}
    assert Move.from_dict(move.to_dict()).by == "cover"
    assert move == Move.place(1, 3)
    assert hash(move) == hash(Move.place(1, 3))


def test_go_out_defaults_to_true() -> None:
    assert Move.from_dict({"seat": 0, "act": "throw"}).go_out is True
    assert Move.place(0, 0).go_out is True


@pytest.mark.parametrize(
    "data",
    [
        [0, "draw"],
        "draw",
        {"act": "draw", "from": "stock"},
        {"seat": 0, "from": "stock"},
        {"seat": 0, "act": "draw", "from": "stock", "card": 7},
        {"seat": 4, "act": "draw", "from": "stock"},
        {"seat": -1, "act": "draw", "from": "stock"},
        {"seat": True, "act": "draw", "from": "stock"},
        {"seat": "0", "act": "draw", "from": "stock"},
        {"seat": 0, "act": "pass"},
        {"seat": 0, "act": "draw"},
        {"seat": 0, "act": "draw", "from": "deck"},
        {"seat": 0, "act": "draw", "from": "stock", "slot": 1},
        {"seat": 0, "act": "place"},
        {"seat": 0, "act": "place", "slot": 10},
        {"seat": 0, "act": "place", "slot": -1},
        {"seat": 0, "act": "place", "slot": 1.0},
        {"seat": 0, "act": "place", "slot": True},
        {"seat": 0, "act": "place", "slot": 2, "from": "stock"},
        {"seat": 0, "act": "throw", "slot": 2},
        {"seat": 0, "act": "repair"},
        {"seat": 0, "act": "repair", "slot": 9},
        {"seat": 0, "act": "place", "slot": 2, "go_out": "no"},
        {"seat": 0, "act": "place", "slot": 2, "go_out": 0},
        {"seat": 0, "act": "draw", "from": "stock", "go_out": False},
        {"seat": 0, "act": "repair", "slot": 2, "go_out": False},
        {"seat": 0, "act": "throw", "by": "robot"},
    ],
)
def test_malformed_moves_are_refused_with_a_typed_error(data: Any) -> None:
    with pytest.raises(MalformedMoveError):
        Move.from_dict(data)


def test_moves_are_frozen_values() -> None:
    move = Move.place(0, 1)
    with pytest.raises(AttributeError):
        move.slot = 2  # type: ignore[misc]
    assert {Move.place(0, 1), Move.place(0, 1), Move.place(0, 2)} == {move, Move.place(0, 2)}


def test_repr_is_readable() -> None:
    assert repr(Move.draw(1, "discard")) == "<Move seat 1 draw discard>"
    assert repr(Move.place(0, 4, go_out=False)) == "<Move seat 0 place slot 4 stay in>"
    assert repr(Move.throw(2)) == "<Move seat 2 throw>"
