"""Going out (docs/rules.md, *A turn* 3-4 and *Winning rack*)."""

from __future__ import annotations

from collections.abc import Callable

from rackcore import Match, Move, RoundResult, Rules

Stacked = Callable[..., Match]
# Strictly increasing, with the run 11 12 13 that two players need by default.
WINNING = [1, 3, 5, 7, 9, 11, 12, 13, 17, 19]
# Strictly increasing with no run at all.
NO_RUN = [2, 4, 6, 8, 10, 14, 16, 18, 20, 22]


def test_a_dealt_winning_rack_does_not_end_the_round(stacked: Stacked) -> None:
    match = stacked(racks={0: WINNING}, discard=40, stock=[39, 38])
    assert (match.turn, match.phase) == (1, "draw")
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.throw(1))
    assert (match.turn, match.phase, match.rounds) == (0, "draw", [])


def test_the_owner_of_a_dealt_winning_rack_goes_out_at_the_end_of_their_first_turn(
    stacked: Stacked,
) -> None:
    match = stacked(racks={0: WINNING}, discard=40, stock=[39, 38])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.throw(1))
    match.apply(Move.draw(0, "stock"))
    assert match.phase == "resolve"
    match.apply(Move.throw(0))
    assert match.phase == "round_over"
    assert match.went_out == 0
    assert match.rounds[-1].winner == 0


def test_the_first_player_with_a_dealt_winning_rack_goes_out_after_placing(
    stacked: Stacked,
) -> None:
    match = stacked(racks={1: WINNING}, stock=[18])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.place(1, 8))  # 17 -> 18 keeps the rack winning
    assert match.racks[1][8] == 18
    assert match.rounds == [RoundResult(1, (match.rounds[0].points[0], 75))]


def test_winning_by_a_throw(stacked: Stacked) -> None:
    match = stacked(racks={1: WINNING}, stock=[40])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.throw(1))
    assert match.phase == "round_over"
    assert match.rounds[0].winner == 1
    assert match.discard[-1] == 40


def test_winning_by_placing_the_missing_card(stacked: Stacked) -> None:
    almost = [1, 3, 5, 7, 9, 11, 12, 13, 40, 19]
    match = stacked(racks={1: almost}, discard=39, stock=[17])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.place(1, 8))
    assert match.racks[1] == WINNING
    assert match.rounds[0].winner == 1
    assert match.discard == [39, 40]


def test_winning_by_placing_a_discard_pickup(stacked: Stacked) -> None:
    almost = [1, 3, 5, 7, 9, 11, 12, 13, 40, 19]
    match = stacked(racks={1: almost}, discard=17)
    match.apply(Move.draw(1, "discard"))
    match.apply(Move.place(1, 8))
    assert match.rounds[0].winner == 1


def test_two_players_need_a_run_of_three_to_go_out(stacked: Stacked) -> None:
    match = stacked(racks={1: NO_RUN}, stock=[40])
    assert match.rules.run_to_go_out == 3
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.throw(1))
    assert (match.phase, match.turn) == ("draw", 0)


def test_completing_a_run_of_three_lets_two_players_go_out(stacked: Stacked) -> None:
    almost = [2, 4, 6, 8, 10, 12, 13, 40, 20, 22]
    match = stacked(racks={1: almost}, stock=[14])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.place(1, 7))
    assert match.rounds[0].winner == 1


def test_an_increasing_rack_with_a_run_of_two_does_not_go_out(stacked: Stacked) -> None:
    almost = [2, 4, 6, 8, 10, 12, 13, 40, 20, 22]
    match = stacked(racks={1: almost}, stock=[19])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.place(1, 7))
    assert match.racks[1] == [2, 4, 6, 8, 10, 12, 13, 19, 20, 22]
    assert (match.phase, match.turn) == ("draw", 0)


def test_run_to_go_out_zero_lets_two_players_go_out_without_a_run(stacked: Stacked) -> None:
    match = stacked(Rules(run_to_go_out=0), racks={1: NO_RUN}, stock=[40])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.throw(1))
    assert match.rounds[0].winner == 1


def test_three_players_need_no_run_by_default(stacked: Stacked) -> None:
    match = stacked(Rules(players=3), dealer=0, racks={1: NO_RUN}, stock=[50])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.throw(1))
    assert match.rounds[0].winner == 1


def test_a_longer_run_requirement_is_enforced(stacked: Stacked) -> None:
    match = stacked(Rules(players=3, run_to_go_out=4), racks={1: WINNING}, stock=[50])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.throw(1))
    assert match.phase == "draw"


def test_go_out_false_keeps_playing(stacked: Stacked) -> None:
    match = stacked(racks={1: WINNING}, stock=[40, 39, 38])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.throw(1, go_out=False))
    assert (match.phase, match.turn, match.rounds) == ("draw", 0, [])
    match.apply(Move.draw(0, "stock"))
    match.apply(Move.throw(0))
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.place(1, 0, go_out=False))  # 38 at index 0 breaks the rack anyway
    assert match.phase == "draw"
    assert match.rounds == []


def test_staying_in_then_going_out_on_a_later_turn(stacked: Stacked) -> None:
    match = stacked(racks={1: WINNING}, stock=[40, 39, 38])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.throw(1, go_out=False))
    match.apply(Move.draw(0, "stock"))
    match.apply(Move.throw(0))
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.throw(1))
    assert match.rounds[0].winner == 1
    assert match.turns_taken == [1, 2]


def test_the_winner_scores_75_and_the_others_their_sequence(stacked: Stacked) -> None:
    other = [8, 10, 18, 22, 30, 14, 39, 37, 26, 38]
    match = stacked(Rules(target=1000), racks={1: WINNING, 0: other}, stock=[40])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.throw(1))
    assert match.rounds == [RoundResult(1, (25, 75))]
    assert match.scores == [25, 75]
    assert match.phase == "round_over"
