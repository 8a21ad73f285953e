"""A profile's stats (services/profiles/stats.py): sums per player count, the shown object."""

from __future__ import annotations

from services.archive.profiles import SeatResult
from services.profiles import stats


def _seat(won: bool, turns: tuple[int, ...], run: int) -> SeatResult:
    return SeatResult(0, "a", "p", False, False, 100, 1, won, len(turns), turns, run)


def test_matches_add_up_per_player_count_and_in_total() -> None:
    stored: dict[str, object] = {}
    stored = stats.add_match(stored, 2, _seat(True, (10, 12), 4))
    stored = stats.add_match(stored, 2, _seat(False, (), 0))
    stored = stats.add_match(stored, 4, _seat(True, (5,), 6))
    assert stored["2"] == {
        "played": 2,
        "won": 1,
        "rounds_won": 2,
        "go_outs": 2,
        "own_turns_to_go_out": 22,
        "best_bonus_run": 4,
    }
    shown = stats.shown(stored)
    assert shown == {
        "played": 3,
        "won": 2,
        "rounds_won": 3,
        "mean_own_turns_to_go_out": 9.0,
        "best_bonus_run": 6,
        "by_players": {
            "2": {
                "played": 2,
                "won": 1,
                "rounds_won": 2,
                "mean_own_turns_to_go_out": 11.0,
                "best_bonus_run": 4,
            },
            "4": {
                "played": 1,
                "won": 1,
                "rounds_won": 1,
                "mean_own_turns_to_go_out": 5.0,
                "best_bonus_run": 6,
            },
        },
    }


def test_no_go_out_yet_has_no_mean() -> None:
    shown = stats.shown(stats.add_match({}, 3, _seat(False, (), 0)))
    assert shown["mean_own_turns_to_go_out"] is None and shown["played"] == 1
