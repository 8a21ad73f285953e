"""The levels are ordered: on a small fixed sample of rounds, the stronger bot wins more.

Easy is a beginner who does not stall (it goes out in at most 22 own turns on
average at two players) and still loses clearly to medium in matches to 500: the
Wilson interval of medium's win rate lies above 75% on these fixed seeds.

A match to a target of 50 ends with the first round someone goes out, so each
match here is one round. Seats alternate so each bot moves first equally often.
The full strength table (matches to 500) is measured by ``rackem tournament`` and
written down in docs/bots.md.
"""

from __future__ import annotations

from statistics import mean

from rackcore import Rules
from rackem.tournament import match_seed, play_match, seating, wilson

ROUNDS = Rules(players=2, target=50)


def _wins(strong: str, weak: str, rounds: int) -> int:
    won = 0
    for i in range(rounds):
        seats = seating([strong, weak], 2, i)
        record = play_match(ROUNDS, seats, match_seed(f"strength/{strong}/{weak}", i))
        won += seats[record.winner] == strong
    return won


def test_medium_beats_easy() -> None:
    assert _wins("medium", "easy", 20) >= 15


def test_easy_goes_out_in_at_most_22_own_turns_on_average_at_two_players() -> None:
    # Beginners make mistakes, but do not stall: 40 rounds at all-easy tables.
    turns: list[int] = []
    for i in range(40):
        turns += play_match(ROUNDS, ("easy", "easy"), match_seed("easy-pace", i)).out_turns
    assert len(turns) == 40 and mean(turns) <= 22


def test_medium_wins_three_matches_in_four_against_easy_to_500() -> None:
    rules = Rules(players=2, target=500)
    matches, won = 20, 0
    for i in range(matches):
        seats = seating(["medium", "easy"], 2, i)
        record = play_match(rules, seats, match_seed("strength-500/medium/easy", i))
        won += seats[record.winner] == "medium"
    assert wilson(won, matches)[0] >= 0.75  # at 95% confidence, not by luck of the draw


def test_hard_beats_medium() -> None:
    assert _wins("hard", "medium", 30) >= 18


def test_easy_tables_finish_their_rounds() -> None:
    rules = Rules(players=3, target=50)
    empty = 0
    for i in range(12):
        record = play_match(rules, ("easy",) * 3, match_seed("easy-finishes", i))
        empty += record.rounds.count(None)
    assert empty <= 2


def _turns_out(level: str, rounds: int) -> list[int]:
    """Own turns of each round's winner at all-``level`` two-player tables, on fixed deals."""
    turns = []
    for i in range(rounds):
        record = play_match(ROUNDS, (level, level), match_seed("turns-out", i))
        turns += record.out_turns
    return turns


def test_hard_goes_out_sooner_than_the_earlier_hard_on_the_same_deals() -> None:
    hard, earlier = _turns_out("hard", 60), _turns_out("hard-2025", 60)
    assert len(hard) == len(earlier) == 60
    assert mean(hard) <= mean(earlier) - 0.3
