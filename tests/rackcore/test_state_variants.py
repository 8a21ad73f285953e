"""The variants that change play: repair_token, descending, stacked decks (docs/rules.md)."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest

from rackcore import IllegalMoveError, LogError, Match, Move, Rules

Stacked = Callable[..., Match]
Deck = Callable[..., list[int]]
RACK = [1, 3, 5, 7, 9, 11, 13, 15, 17, 19]


def test_repair_swaps_slots_i_and_i_plus_1_then_the_draw_must_still_be_resolved(
    stacked: Stacked,
) -> None:
    match = stacked(Rules(repair_token=True), racks={1: RACK}, stock=[40])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.repair(1, 3))
    assert match.racks[1] == [1, 3, 5, 9, 7, 11, 13, 15, 17, 19]
    assert (match.phase, match.turn, match.held) == ("resolve", 1, 40)
    assert match.repair_tokens == [True, False]
    assert match.turns_taken == [0, 0]
    assert {m.act for m in match.legal_moves()} == {"place", "throw"}
    match.apply(Move.place(1, 9))
    assert match.racks[1] == [1, 3, 5, 9, 7, 11, 13, 15, 17, 40]
    assert match.turn == 0


@pytest.mark.parametrize(
    "move", [Move.repair(1, 0), Move.draw(1, "stock"), Move.draw(1, "discard")]
)
def test_after_a_repair_only_resolving_is_legal(stacked: Stacked, move: Move) -> None:
    match = stacked(Rules(repair_token=True), stock=[40])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.repair(1, 3))
    before = copy.deepcopy(vars(match))
    with pytest.raises(IllegalMoveError):
        match.apply(move)
    assert vars(match) == before


def test_the_repair_token_is_spent_once_per_round(stacked: Stacked, deck: Deck) -> None:
    rules = Rules(repair_token=True, max_recycles=0)
    match = stacked(rules, later=[deck(2, 1, {})])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.repair(1, 0))
    match.apply(Move.throw(1, go_out=False))
    match.apply(Move.draw(0, "stock"))
    match.apply(Move.throw(0, go_out=False))
    match.apply(Move.draw(1, "stock"))
    assert Move.repair(1, 0) not in match.legal_moves()
    with pytest.raises(IllegalMoveError, match="no repair token"):
        match.apply(Move.repair(1, 0))
    while match.phase != "round_over":
        if match.phase == "resolve":
            match.apply(Move.throw(match.turn, go_out=False))
        else:
            match.apply(Move.draw(match.turn, "stock"))
    match.apply(Move.draw(0, "stock"))
    assert match.round_no == 2
    assert match.repair_tokens == [True, True]
    match.apply(Move.repair(0, 8))


def test_repair_is_refused_before_drawing_and_without_the_option(stacked: Stacked) -> None:
    with_token = stacked(Rules(repair_token=True))
    with pytest.raises(IllegalMoveError):
        with_token.apply(Move.repair(1, 0))
    without = stacked(Rules())
    without.apply(Move.draw(1, "stock"))
    assert all(m.act != "repair" for m in without.legal_moves())
    with pytest.raises(IllegalMoveError):
        without.apply(Move.repair(1, 0))


def test_a_repair_can_complete_a_winning_rack_that_goes_out_after_the_throw(
    stacked: Stacked,
) -> None:
    almost = [1, 3, 5, 7, 9, 12, 11, 13, 17, 19]
    match = stacked(Rules(repair_token=True), racks={1: almost}, stock=[40])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.repair(1, 5))
    assert match.phase == "resolve"  # going out waits for the end of the turn
    match.apply(Move.throw(1))
    assert match.rounds[0].winner == 1


def test_descending_goes_out_with_a_decreasing_rack(stacked: Stacked) -> None:
    down = [40, 38, 36, 35, 34, 20, 10, 5, 3, 1]  # the run 36 35 34 goes down by one
    match = stacked(Rules(descending=True), racks={1: down}, stock=[39])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.throw(1))
    assert match.rounds[0].winner == 1


def test_descending_does_not_go_out_with_an_increasing_rack(stacked: Stacked) -> None:
    up = [1, 3, 5, 7, 9, 11, 12, 13, 17, 19]
    match = stacked(Rules(descending=True), racks={1: up}, stock=[39])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.throw(1))
    assert match.phase == "draw"


def test_descending_needs_a_downward_run_with_two_players(stacked: Stacked) -> None:
    down_no_run = [40, 38, 36, 34, 32, 20, 10, 5, 3, 1]
    match = stacked(Rules(descending=True), racks={1: down_no_run}, stock=[39])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.throw(1))
    assert match.phase == "draw"


def test_descending_scores_the_decreasing_sequence_with_a_downward_bonus(stacked: Stacked) -> None:
    down = [50, 49, 48, 47, 30, 20, 10, 5, 3, 1]
    other = [45, 44, 43, 46, 4, 6, 8, 12, 14, 16]
    rules = Rules(players=3, descending=True, bonus=True, target=1000)
    match = stacked(rules, racks={1: down, 2: other}, stock=[39])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.throw(1))
    assert match.rounds[0].points[1:] == (75 + 100, 15)


def test_stacked_decks_cannot_use_reshuffle_on_recycle(deck: Deck) -> None:
    with pytest.raises(LogError, match="reshuffle_on_recycle"):
        Match(Rules(reshuffle_on_recycle=True), decks=[deck(2, 0, {})], dealer=0)


@pytest.mark.parametrize("dealer", [None, -1, 2, True, "0"])
def test_stacked_decks_need_a_first_dealer_seat(deck: Deck, dealer: object) -> None:
    with pytest.raises(LogError, match="first_dealer"):
        Match(Rules(), decks=[deck(2, 0, {})], dealer=dealer)  # type: ignore[arg-type]


def test_a_stacked_deck_must_be_a_permutation_of_the_deck(deck: Deck) -> None:
    bad = deck(2, 0, {})
    bad[5] = bad[6]
    with pytest.raises(LogError, match="permutation"):
        Match(Rules(), decks=[bad], dealer=0)
    with pytest.raises(LogError, match="permutation"):
        Match(Rules(players=3), decks=[deck(2, 0, {})], dealer=0)


def test_a_match_has_a_seed_or_stacked_decks_not_both(deck: Deck) -> None:
    with pytest.raises(LogError):
        Match(Rules(), bytes(32), decks=[deck(2, 0, {})], dealer=0)


def test_a_seed_is_32_bytes() -> None:
    with pytest.raises(LogError):
        Match(Rules(), bytes(31))


def test_running_out_of_stacked_decks_is_refused_without_changing_the_match(
    stacked: Stacked,
) -> None:
    match = stacked(Rules(target=1000), racks={1: [1, 3, 5, 7, 9, 11, 12, 13, 17, 19]})
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.throw(1))
    before = copy.deepcopy(vars(match))
    with pytest.raises(LogError, match="round 2"):
        match.apply(Move.draw(0, "stock"))
    assert vars(match) == before
