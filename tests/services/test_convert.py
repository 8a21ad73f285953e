"""rackcore values ⇄ protobuf: rules and moves survive the trip whole."""

from __future__ import annotations

from hypothesis import given, settings

from rackcore import Match, Move, Rules
from services.convert import move_from_pb, move_to_pb, rules_from_pb, rules_to_pb
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
