from __future__ import annotations

import orjson
import pytest

from rackcore import MalformedMoveError, Rules, RulesError
from services._gen.rackem.v1 import game_pb2 as pb
from services._gen.rackem.v1 import matchmaker_pb2 as mm
from services.convert import move_from_pb, rules_from_pb, rules_to_pb
from services.gateway import messages
from services.gateway.protocol import ProtocolError, encode, schemas


def sent(message: dict[str, object]) -> dict[str, object]:
    """A message as the client reads it."""
    out: dict[str, object] = orjson.loads(encode(message))
    return out


def test_a_lobby_message_carries_full_rules_and_matches_its_schema() -> None:
    lobby = mm.Lobby(
        code="K7MX2Q",
        table_id="t0123456789abcdef",
        rules=rules_to_pb(Rules(players=3, target=300)),
        seats=[
            mm.LobbySeat(seat=0, name="Ann", taken=True),
            mm.LobbySeat(seat=1),
            mm.LobbySeat(seat=2, name="Bot", taken=True, bot=True),
        ],
        creator_seat=0,
        status="waiting",
        public=False,
        level="easy",
    )
    message = messages.lobby(lobby, you=0)
    assert schemas()["lobby"].error(message) is None
    assert message["rules"] == Rules(players=3, target=300).to_dict(full=True)
    assert message["seats"][1] == {"seat": 1, "name": "", "taken": False, "bot": False}


def test_a_client_move_becomes_a_protobuf_move_without_a_seat() -> None:
    assert messages.move_to_pb({"act": "place", "slot": 3, "go_out": False}) == pb.Move(
        act="place", slot=3, go_out=False
    )
    assert messages.move_to_pb({"act": "draw", "from": "discard"}) == pb.Move(
        act="draw", source="discard"
    )


MALFORMED = [
    {"act": "jump"},
    {"act": "place"},
    {"act": "place", "slot": 10},
    {"act": "repair", "slot": 9},
    {"act": "draw"},
    {"act": "draw", "from": "deck"},
    {"act": "draw", "from": ""},
    {"act": "throw", "slot": 2},
    {"act": "draw", "from": "stock", "go_out": False},
    {"act": "place", "slot": -1},
]


@pytest.mark.parametrize("move", MALFORMED)
def test_a_move_that_is_not_a_move_is_relayed_and_the_table_finds_it_malformed(
    move: dict[str, object],
) -> None:
    relayed = messages.move_to_pb(move)  # the gateway only maps the fields
    with pytest.raises(MalformedMoveError) as caught:
        move_from_pb(relayed, seat=0, by="human")  # what the table does with it
    assert caught.value.code == "malformed_move" and str(caught.value)


def test_rules_map_field_by_field_and_the_rules_engine_judges_them() -> None:
    assert messages.rules_to_request(None) == pb.Rules()
    assert messages.rules_to_request({"run_to_go_out": None, "players": 3}) == pb.Rules(players=3)
    full = Rules(players=4, partners=True, target=300, tiebreak="extra_round")
    assert messages.rules_to_request(full.to_dict(full=True)) == rules_to_pb(full)
    # What no Rules message can hold is refused here, before any service is asked ...
    for bad, problem in (
        ({"colour": "red"}, "unknown rules option: colour"),
        ({"target": "high"}, "target must be an integer"),
        ({"players": True}, "players must be an integer"),
        ({"bonus": 1}, "bonus must be true or false"),
        ({"tiebreak": 2}, "tiebreak must be a string"),
        ({"target": 1.5}, "target must be an integer"),
    ):
        with pytest.raises(ProtocolError) as caught:
            messages.rules_to_request(bad)
        assert (caught.value.code, caught.value.message) == ("bad_rules", problem)
    # ... and what is no rules is the matchmaker's to refuse (``rules_from_pb``: bad_rules).
    for bad in ({"players": 5}, {"partners": True}, {"target": 1}, {"tiebreak": "coin"}):
        with pytest.raises(RulesError):
            rules_from_pb(messages.rules_to_request(bad))


def test_a_lobbys_rules_are_the_rules_message_field_by_field() -> None:
    rules = Rules(players=3, bonus=True, run_to_go_out=4, tiebreak="extra_round")
    assert messages.rules_dict(rules_to_pb(rules)) == rules.to_dict(full=True)
    assert list(messages.rules_dict(rules_to_pb(rules))) == list(rules.to_dict(full=True))
