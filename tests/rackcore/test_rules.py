from __future__ import annotations

from typing import Any

import pytest

from rackcore import Rules, RulesError


def test_defaults_are_those_of_the_contract() -> None:
    rules = Rules()
    assert rules.players == 2
    assert rules.target == 500
    assert rules.max_recycles == 3
    assert rules.turn_cap == 200
    assert rules.tiebreak == "went_out"
    for option in (
        "bonus",
        "partners",
        "descending",
        "repair_token",
        "visible_center",
        "reshuffle_on_recycle",
    ):
        assert getattr(rules, option) is False


@pytest.mark.parametrize(("players", "run"), [(2, 3), (3, 0), (4, 0)])
def test_run_to_go_out_defaults_to_three_with_two_players_only(players: int, run: int) -> None:
    assert Rules(players=players).run_to_go_out == run
    assert Rules(players=players).run_needed == run


def test_run_to_go_out_can_be_set_explicitly() -> None:
    assert Rules(players=2, run_to_go_out=0).run_needed == 0
    assert Rules(players=4, run_to_go_out=5).run_needed == 5


@pytest.mark.parametrize(("players", "size"), [(2, 40), (3, 50), (4, 60)])
def test_the_deck_has_ten_cards_per_player_plus_twenty(players: int, size: int) -> None:
    assert Rules(players=players).deck_size == size


@pytest.mark.parametrize(
    "options",
    [
        {"players": 1},
        {"players": 5},
        {"players": True},
        {"players": 2.0},
        {"target": 49},
        {"target": 10001},
        {"target": "500"},
        {"run_to_go_out": -1},
        {"run_to_go_out": 11},
        {"max_recycles": -1},
        {"max_recycles": 11},
        {"turn_cap": 49},
        {"turn_cap": 1001},
        {"tiebreak": "coin"},
        {"tiebreak": None},
        {"bonus": 1},
        {"bonus": "yes"},
        {"descending": None},
        {"partners": True},
        {"partners": True, "players": 3},
    ],
)
def test_options_out_of_range_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(RulesError):
        Rules(**options)


@pytest.mark.parametrize(
    "options",
    [
        {"players": 4, "target": 50},
        {"target": 10000},
        {"max_recycles": 0},
        {"max_recycles": 10},
        {"turn_cap": 50},
        {"turn_cap": 1000},
        {"run_to_go_out": 0},
        {"run_to_go_out": 10},
        {"tiebreak": "extra_round"},
        {"players": 4, "partners": True},
    ],
)
def test_options_at_the_edges_of_their_range_are_accepted(options: dict[str, Any]) -> None:
    rules = Rules(**options)
    for name, value in options.items():
        assert getattr(rules, name) == value


def test_partners_make_two_sides_of_alternate_seats() -> None:
    rules = Rules(players=4, partners=True)
    assert rules.sides == 2
    assert [rules.side_of(seat) for seat in range(4)] == [0, 1, 0, 1]


def test_without_partners_every_seat_is_its_own_side() -> None:
    rules = Rules(players=3)
    assert rules.sides == 3
    assert [rules.side_of(seat) for seat in range(3)] == [0, 1, 2]


def test_to_dict_lists_only_options_that_differ_from_the_defaults() -> None:
    assert Rules().to_dict() == {"players": 2}
    assert Rules(players=3, bonus=True).to_dict() == {"players": 3, "bonus": True}
    assert Rules(players=3, run_to_go_out=3).to_dict() == {"players": 3, "run_to_go_out": 3}
    assert Rules(players=2, run_to_go_out=0).to_dict() == {"players": 2, "run_to_go_out": 0}


def test_to_dict_full_lists_every_option() -> None:
    full = Rules().to_dict(full=True)
    assert full["run_to_go_out"] == 3
    assert set(full) == {
        "players",
        "target",
        "bonus",
        "partners",
        "run_to_go_out",
        "descending",
        "repair_token",
        "visible_center",
        "reshuffle_on_recycle",
        "max_recycles",
        "turn_cap",
        "tiebreak",
    }


@pytest.mark.parametrize(
    "rules",
    [
        Rules(),
        Rules(players=4, partners=True, bonus=True, tiebreak="extra_round"),
        Rules(players=3, descending=True, repair_token=True, visible_center=True, turn_cap=60),
        Rules(reshuffle_on_recycle=True, max_recycles=0, run_to_go_out=0, target=50),
    ],
)
def test_rules_round_trip_through_a_dict(rules: Rules) -> None:
    assert Rules.from_dict(rules.to_dict()) == rules
    assert Rules.from_dict(rules.to_dict(full=True)) == rules


def test_from_dict_refuses_unknown_options_and_non_objects() -> None:
    with pytest.raises(RulesError, match="unknown rules option: jokers"):
        Rules.from_dict({"players": 2, "jokers": True})
    with pytest.raises(RulesError):
        Rules.from_dict([2])
    with pytest.raises(RulesError):
        Rules.from_dict({"players": 9})


def test_rules_are_immutable() -> None:
    rules = Rules()
    with pytest.raises(AttributeError):
        rules.target = 100  # type: ignore[misc]
