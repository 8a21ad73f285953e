"""What the bots do in positions where the right play is clear."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from rackcore import Match, Move, Rules, View, observe
from rackcore.bots import LEVELS, choose

Stacked = Callable[..., Match]
ONE_OFF = [3, 30, 9, 14, 20, 22, 26, 31, 35, 39]  # slot 1 is the only card out of order


@pytest.mark.parametrize("level", LEVELS)
def test_every_level_goes_out_with_the_card_that_completes_its_rack(
    stacked: Stacked, level: str
) -> None:
    match = stacked(Rules(players=2, run_to_go_out=0), dealer=0, racks={1: ONE_OFF}, stock=[6])
    match.apply(Move.draw(1, "stock"))
    move = choose(observe(match, 1), level)
    assert move == Move.place(1, 1)
    match.apply(move)
    assert match.rounds[-1].winner == 1


@pytest.mark.parametrize("level", ["medium", "hard"])
def test_the_strong_levels_take_the_discard_that_completes_the_rack(
    stacked: Stacked, level: str
) -> None:
    match = stacked(Rules(players=2, run_to_go_out=0), dealer=0, racks={1: ONE_OFF}, discard=7)
    assert choose(observe(match, 1), level) == Move.draw(1, "discard")


@pytest.mark.parametrize("level", ["medium", "hard"])
def test_a_descending_rack_goes_out_too(stacked: Stacked, level: str) -> None:
    rack = [39, 35, 31, 26, 22, 20, 14, 30, 6, 3]  # slot 7 is out of order
    match = stacked(Rules(players=2, descending=True, run_to_go_out=0), racks={1: rack}, discard=9)
    assert choose(observe(match, 1), level) == Move.draw(1, "discard")
    match.apply(Move.draw(1, "discard"))
    assert choose(observe(match, 1), level) == Move.place(1, 7)


def test_the_strong_levels_build_the_run_the_rules_ask_for(stacked: Stacked) -> None:
    # Increasing already, but no run of three: 17 after 15, 16 makes one.
    rack = [2, 6, 10, 15, 16, 24, 28, 31, 35, 39]
    match = stacked(Rules(players=2), racks={1: rack}, discard=17)
    for level in ("medium", "hard"):
        assert choose(observe(match, 1), level) == Move.draw(1, "discard")
    match.apply(Move.draw(1, "discard"))
    assert choose(observe(match, 1), "hard") == Move.place(1, 5)


def test_hard_spends_the_repair_token_when_a_swap_wins(stacked: Stacked) -> None:
    rack = [1, 3, 5, 7, 11, 9, 13, 15, 17, 19]  # slots 4 and 5 are swapped
    rules = Rules(players=2, run_to_go_out=0, repair_token=True)
    match = stacked(rules, racks={1: rack}, discard=40, stock=[38])
    played = []
    while match.phase != "round_over":
        move = choose(observe(match, match.turn), "hard")
        played.append(move)
        match.apply(move)
    assert Move.repair(1, 4) in played
    assert match.rounds[-1].winner == 1


def _view(match: Match, seat: int, **changes: object) -> View:
    return dataclasses.replace(observe(match, seat), **changes)  # type: ignore[arg-type]


def test_hard_draws_the_stock_when_it_knows_the_next_card_wins(stacked: Stacked) -> None:
    match = stacked(Rules(players=2, run_to_go_out=0), racks={1: ONE_OFF}, discard=4)
    view = _view(match, 1, stock_known=(6, 12, 18), stock_count=3, recycles=1)
    assert choose(view, "medium") == Move.draw(1, "discard")  # 4 in slot 1 helps a little
    assert choose(view, "hard") == Move.draw(1, "stock")  # but 6 comes next and wins


def test_hard_does_not_hand_the_next_seat_the_card_it_waits_for(stacked: Stacked) -> None:
    # Seat 0 showed nine cards in order; only 21 fits its last open slot.
    shown = (3, 7, 11, 15, None, 25, 29, 33, 37, 40)
    mine = [1, 4, 8, 12, 16, 38, 24, 28, 32, 36]  # 38 in slot 5 is a junk card
    match = stacked(Rules(players=2, run_to_go_out=0), racks={1: mine}, stock=[21])
    match.apply(Move.draw(1, "stock"))
    view = _view(
        match, 1, known=(shown, (None,) * 10), turns_taken=(12, 12), held=21, held_from="stock"
    )
    move = choose(view, "hard")
    assert move.act == "place"  # keeps 21 and gives up a card seat 0 cannot use


def _bonus_view(stacked: Stacked, turns: int, scores: tuple[int, int] = (0, 0)) -> View:
    # A winning rack with a run of five (16..20); 15 or 21 would make it six.
    rack = [2, 6, 10, 16, 17, 18, 19, 20, 30, 38]
    match = stacked(Rules(players=2, bonus=True), racks={1: rack}, stock=[40])
    match.apply(Move.draw(1, "stock"))
    return _view(match, 1, turns_taken=(turns, turns), scores=scores)


def test_with_bonus_hard_stays_in_early_for_a_longer_run(stacked: Stacked) -> None:
    move = choose(_bonus_view(stacked, turns=0), "hard")
    assert move.act in ("place", "throw")
    assert move.go_out is False
    assert choose(_bonus_view(stacked, turns=0), "medium").go_out is True


def test_with_bonus_hard_goes_out_when_an_opponent_is_close(stacked: Stacked) -> None:
    assert choose(_bonus_view(stacked, turns=14), "hard").go_out is True


def test_hard_goes_out_when_that_reaches_the_target(stacked: Stacked) -> None:
    assert choose(_bonus_view(stacked, turns=0, scores=(0, 300)), "hard").go_out is True
