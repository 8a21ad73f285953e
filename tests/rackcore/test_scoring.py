from __future__ import annotations

import pytest

from rackcore import bonus_for_run, is_winning, longest_run, rack_points, scored_length

RULEBOOK = [7, 10, 18, 22, 30, 13, 45, 37, 26, 52]


def test_the_rulebook_example_scores_25() -> None:
    assert scored_length(RULEBOOK) == 5
    assert rack_points(RULEBOOK) == 25


def test_cards_after_the_break_score_nothing_even_if_they_increase_again() -> None:
    rack = [1, 2, 3, 40, 5, 6, 7, 8, 9, 10]
    assert rack_points(rack) == 20


def test_the_first_card_always_counts() -> None:
    assert rack_points([50, 45, 40, 35, 30, 25, 20, 15, 10, 5]) == 5
    assert rack_points([60, 1, 2, 3, 4, 5, 6, 7, 8, 9]) == 5


def test_a_fully_increasing_rack_scores_50() -> None:
    assert rack_points(list(range(1, 11))) == 50


def test_descending_scores_the_decreasing_sequence() -> None:
    rack = [52, 26, 37, 45, 13, 30, 22, 18, 10, 7]
    assert rack_points(rack, descending=True) == 10
    assert rack_points(list(range(10, 0, -1)), descending=True) == 50
    assert rack_points(list(range(1, 11)), descending=True) == 5


def test_longest_run_counts_adjacent_consecutive_numbers() -> None:
    assert longest_run([1, 3, 5, 7, 9, 11, 13, 15, 17, 19]) == 1
    assert longest_run([1, 18, 19, 20, 30, 31, 40, 41, 42, 43]) == 4
    assert longest_run(RULEBOOK) == 1


def test_a_run_must_go_up_by_one_in_adjacent_slots() -> None:
    assert longest_run([20, 19, 18, 1, 2, 4, 5, 7, 8, 10]) == 2
    assert longest_run([20, 19, 18, 1, 2, 4, 5, 7, 8, 10], descending=True) == 3


@pytest.mark.parametrize(
    ("run", "bonus"),
    [(0, 0), (1, 0), (2, 0), (3, 50), (4, 100), (5, 200), (6, 400), (7, 400), (10, 400)],
)
def test_the_bonus_table(run: int, bonus: int) -> None:
    assert bonus_for_run(run) == bonus


def test_a_winning_rack_strictly_increases() -> None:
    assert is_winning([1, 3, 5, 7, 9, 11, 13, 15, 17, 19])
    assert not is_winning([1, 3, 5, 7, 9, 11, 13, 15, 19, 17])
    assert not is_winning([3, 1, 5, 7, 9, 11, 13, 15, 17, 19])


def test_a_run_requirement_needs_a_long_enough_run() -> None:
    no_run = [1, 3, 5, 7, 9, 11, 13, 15, 17, 19]
    run_of_3 = [1, 3, 5, 7, 9, 11, 12, 13, 17, 19]
    assert not is_winning(no_run, run_needed=2)
    assert is_winning(no_run, run_needed=1)
    assert is_winning(no_run, run_needed=0)
    assert is_winning(run_of_3, run_needed=3)
    assert not is_winning(run_of_3, run_needed=4)


def test_a_descending_winning_rack_strictly_decreases_with_runs_going_down() -> None:
    rack = [40, 38, 36, 35, 34, 20, 10, 5, 3, 1]
    assert is_winning(rack, run_needed=3, descending=True)
    assert not is_winning(rack, run_needed=4, descending=True)
    assert not is_winning(list(reversed(rack)), descending=True)
