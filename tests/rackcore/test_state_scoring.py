"""Scoring rounds and winning the match (docs/rules.md, *Scoring a round*, *Winning the match*)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from rackcore import Match, Move, Outcome, RoundResult, Rules

Stacked = Callable[..., Match]
Deck = Callable[..., list[int]]
WIN = [1, 3, 5, 7, 9, 11, 13, 15, 17, 19]  # no run: fine with 3 or 4 players
UP = [2, 4, 6, 8, 10, 12, 14, 16, 18, 20]  # scores 50 for a seat that did not go out
SCORES_25 = [21, 23, 25, 27, 29, 22, 24, 26, 28, 30]
ZIGZAG_POINTS = 5  # what the stacking helper's filler racks score


def _go_out(match: Match, seat: int) -> None:
    """Every seat before ``seat`` draws and throws (staying in); then ``seat`` throws out."""
    while match.turn != seat:
        match.apply(Move.draw(match.turn, "stock"))
        match.apply(Move.throw(match.turn, go_out=False))
    match.apply(Move.draw(seat, "stock"))
    match.apply(Move.throw(seat))


@pytest.mark.parametrize(
    ("rack", "bonus"),
    [
        (WIN, 0),
        ([1, 2, 5, 7, 9, 11, 13, 15, 17, 19], 0),
        ([1, 2, 3, 7, 9, 11, 13, 15, 17, 19], 50),
        ([1, 2, 3, 4, 9, 11, 13, 15, 17, 19], 100),
        ([1, 2, 3, 4, 5, 11, 13, 15, 17, 19], 200),
        ([1, 2, 3, 4, 5, 6, 13, 15, 17, 19], 400),
        ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 400),
    ],
)
def test_the_player_who_goes_out_scores_75_plus_the_run_bonus(
    stacked: Stacked, rack: list[int], bonus: int
) -> None:
    match = stacked(Rules(players=3, bonus=True, target=1000), racks={1: rack}, stock=[50])
    _go_out(match, 1)
    assert match.rounds[0].points[1] == 75 + bonus


def test_only_the_longest_run_earns_a_bonus_once(stacked: Stacked) -> None:
    rack = [1, 2, 3, 10, 11, 12, 13, 20, 21, 22]  # runs of 3, 4 and 3
    match = stacked(Rules(players=3, bonus=True, target=1000), racks={1: rack}, stock=[50])
    _go_out(match, 1)
    assert match.rounds[0].points[1] == 75 + 100


def test_without_bonus_a_run_earns_nothing_extra(stacked: Stacked) -> None:
    rack = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    match = stacked(Rules(players=3, target=1000), racks={1: rack}, stock=[50])
    _go_out(match, 1)
    assert match.rounds[0].points[1] == 75


def test_everyone_else_scores_their_increasing_sequence(stacked: Stacked) -> None:
    racks = {1: WIN, 2: UP, 0: SCORES_25}
    match = stacked(Rules(players=3, target=1000), racks=racks, stock=[50])
    _go_out(match, 1)
    assert match.rounds == [RoundResult(1, (25, 75, 50))]


def test_a_round_with_no_winner_scores_every_player(stacked: Stacked) -> None:
    racks = {1: WIN, 2: UP, 0: SCORES_25}
    match = stacked(Rules(players=3, target=1000, max_recycles=0), racks=racks)
    while match.phase != "round_over":
        match.apply(Move.draw(match.turn, "stock"))
        if match.phase == "resolve":
            match.apply(Move.throw(match.turn, go_out=False))
    assert match.rounds == [RoundResult(None, (25, 50, 50))]


def test_totals_accumulate_over_rounds(stacked: Stacked, deck: Deck) -> None:
    second = deck(3, 1, {2: WIN, 1: UP})
    match = stacked(Rules(players=3, target=1000), racks={1: WIN}, later=[second])
    _go_out(match, 1)
    _go_out(match, 2)
    assert match.scores == [5 + 5, 75 + 50, 5 + 75]
    assert match.outcome() is None


def test_the_match_ends_when_a_side_reaches_the_target(stacked: Stacked) -> None:
    match = stacked(Rules(players=3, target=75), racks={1: WIN, 2: UP}, stock=[50])
    _go_out(match, 1)
    assert match.phase == "match_over"
    assert match.outcome() == Outcome(1, (5, 75, 50))
    assert match.winner == 1


def test_the_highest_total_among_the_contenders_wins(stacked: Stacked) -> None:
    match = stacked(Rules(players=3, target=50), racks={1: WIN, 2: UP})
    _go_out(match, 1)
    assert match.outcome() == Outcome(1, (5, 75, 50))


def test_a_tie_at_the_top_goes_to_the_side_that_went_out(stacked: Stacked, deck: Deck) -> None:
    second = deck(3, 0, {1: WIN, 0: UP})
    match = stacked(Rules(players=3, target=100), dealer=2, racks={0: WIN, 1: UP}, later=[second])
    _go_out(match, 0)
    assert match.scores == [75, 50, 5]
    _go_out(match, 1)
    assert match.scores == [125, 125, 10]
    assert match.outcome() == Outcome(1, (125, 125, 10))


def test_a_tie_without_its_winner_going_out_goes_to_the_lowest_seat(
    stacked: Stacked, deck: Deck
) -> None:
    second = deck(3, 1, {0: WIN, 1: SCORES_25, 2: UP})
    match = stacked(Rules(players=3, target=100), racks={1: WIN, 2: UP}, later=[second])
    _go_out(match, 1)
    assert match.scores == [5, 75, 50]
    _go_out(match, 0)  # seat 2 stays in with its increasing rack, seat 0 goes out
    assert match.scores == [80, 100, 100]
    assert match.outcome() == Outcome(1, (80, 100, 100))


def test_a_tie_in_a_round_with_no_winner_goes_to_the_lowest_seat(
    stacked: Stacked, deck: Deck
) -> None:
    second = deck(3, 1, {1: SCORES_25, 2: UP})
    rules = Rules(players=3, target=100, max_recycles=0)
    match = stacked(rules, racks={1: WIN, 2: UP}, later=[second])
    _go_out(match, 1)
    while match.phase != "match_over":
        match.apply(Move.draw(match.turn, "stock"))
        if match.phase == "resolve":
            match.apply(Move.throw(match.turn, go_out=False))
    assert match.rounds[-1].winner is None
    assert match.outcome() == Outcome(1, (10, 100, 100))


def test_extra_round_plays_on_until_one_side_alone_is_highest(stacked: Stacked, deck: Deck) -> None:
    second = deck(3, 0, {1: WIN, 0: UP})
    third = deck(3, 1, {2: WIN, 0: UP})
    rules = Rules(players=3, target=100, tiebreak="extra_round")
    match = stacked(rules, dealer=2, racks={0: WIN, 1: UP}, later=[second, third])
    _go_out(match, 0)
    _go_out(match, 1)
    assert match.scores == [125, 125, 10]
    assert (match.phase, match.outcome()) == ("round_over", None)
    _go_out(match, 2)
    assert match.round_no == 3
    assert match.outcome() == Outcome(0, (175, 130, 85))


def test_partners_sit_0_and_2_against_1_and_3(stacked: Stacked) -> None:
    rules = Rules(players=4, partners=True, target=100)
    match = stacked(rules, racks={1: WIN, 3: SCORES_25}, stock=[60])
    _go_out(match, 1)
    assert match.scores == [5, 75, 5, 25]  # no seat alone reaches 100
    assert match.side_totals() == [10, 100]
    assert match.outcome() == Outcome(1, (5, 75, 5, 25))


def test_with_partners_the_winner_is_the_pair_not_the_seat(stacked: Stacked) -> None:
    rules = Rules(players=4, partners=True, target=100)
    match = stacked(rules, dealer=1, racks={2: WIN, 0: SCORES_25}, stock=[60])
    _go_out(match, 2)
    assert match.side_totals() == [100, 10]
    assert match.winner == 0


def test_partners_tie_goes_to_the_pair_that_went_out(stacked: Stacked) -> None:
    rules = Rules(players=4, partners=True, target=100)
    racks = {3: WIN, 1: SCORES_25, 0: UP, 2: list(range(31, 41))}
    match = stacked(rules, dealer=2, racks=racks)
    _go_out(match, 3)
    assert match.side_totals() == [100, 100]
    assert match.winner == 1


def test_without_partners_four_players_are_four_sides(stacked: Stacked) -> None:
    match = stacked(Rules(players=4, target=75), racks={1: WIN}, stock=[60])
    _go_out(match, 1)
    assert match.side_totals() == match.scores
    assert match.winner == 1
