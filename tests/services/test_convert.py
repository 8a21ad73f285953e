"""rackcore values ⇄ protobuf: rules and moves survive the trip whole."""

from __future__ import annotations

from hypothesis import given, settings

from rackcore import Match, Move, Rules
from services.convert import move_from_pb, move_to_pb, rules_from_pb, rules_to_pb
from services.gateway import messages
from tests.services.table.test_view_json import table_rules


@settings(max_examples=50, deadline=None)
@given(rules=table_rules())
def test_rules_come_back_from_their_message_unchanged(rules: Rules) -> None:
    assert rules_from_pb(rules_to_pb(rules)) == rules


def test_every_legal_move_comes_back_from_its_message_with_its_seat() -> None:
    match = Match(Rules(players=3, repair_token=True), bytes(32))
    match.apply(Move.draw(match.turn, "stock"))
    for move in match.legal_moves():
        back = move_from_pb(move_to_pb(move.with_by("cover")), by="cover")
        assert (back, back.by) == (move, "cover")
        assert move_from_pb(move_to_pb(move), seat=2).seat == 2


def test_a_move_has_one_shape_from_the_protocol_to_rackcore() -> None:
    """The protocol's move JSON, its message and rackcore's move carry go_out alike: absent
    in the JSON is unset in the message is True in rackcore, and no step inverts it."""
    for fields, go_out in [
        ({"act": "place", "slot": 3}, True),
        ({"act": "place", "slot": 3, "go_out": True}, True),
        ({"act": "place", "slot": 3, "go_out": False}, False),
        ({"act": "throw", "go_out": False}, False),
    ]:
        message = messages.move_to_pb(fields)
        assert message.HasField("go_out") == ("go_out" in fields)
        move = move_from_pb(message, seat=1)
        assert move.go_out is go_out
        assert move_to_pb(move).go_out is go_out
