"""The levels are ordered: on a small fixed sample of rounds, the stronger bot wins more.

A match to a target of 50 ends with the first round someone goes out, so each
match here is one round. Seats alternate so each bot moves first equally often.
The full strength table (matches to 500) is measured by ``rackem tournament`` and
written down in docs/bots.md.
"""

from __future__ import annotations

from rackcore import Rules
from rackem.tournament import match_seed, play_match, seating

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


def test_hard_beats_medium() -> None:
    assert _wins("hard", "medium", 30) >= 18


def test_easy_tables_finish_their_rounds() -> None:
    rules = Rules(players=3, target=50)
    empty = 0
    for i in range(12):
        record = play_match(rules, ("easy",) * 3, match_seed("easy-finishes", i))
        empty += record.rounds.count(None)
    assert empty <= 2
