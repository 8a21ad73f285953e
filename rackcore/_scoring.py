"""Rack shapes and round scoring (docs/rules.md, *Winning rack* and *Scoring a round*)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["bonus_for_run", "is_winning", "longest_run", "rack_points", "scored_length"]

OUT_POINTS = 75
CARD_POINTS = 5
_BONUS = {3: 50, 4: 100, 5: 200}


def _step(descending: bool) -> int:
    return -1 if descending else 1


def scored_length(rack: Sequence[int], descending: bool = False) -> int:
    """How many cards from index 0 keep increasing (decreasing when ``descending``)."""
    n = 1
    for i in range(1, len(rack)):
        if (rack[i] > rack[i - 1]) != (not descending) or rack[i] == rack[i - 1]:
            break
        n += 1
    return n


def longest_run(rack: Sequence[int], descending: bool = False) -> int:
    """Longest stretch of adjacent slots holding consecutive numbers (x, x+1, …)."""
    step = _step(descending)
    best = run = 1
    for i in range(1, len(rack)):
        run = run + 1 if rack[i] == rack[i - 1] + step else 1
        best = max(best, run)
    return best


def is_winning(rack: Sequence[int], run_needed: int = 0, descending: bool = False) -> bool:
    """Strictly monotone from index 0 to 9, with a run of at least ``run_needed``."""
    if scored_length(rack, descending) != len(rack):
        return False
    return run_needed <= 1 or longest_run(rack, descending) >= run_needed


def bonus_for_run(run: int) -> int:
    """Bonus for the longest run of the player who went out: 3→50, 4→100, 5→200, 6+→400."""
    if run >= 6:
        return 400
    return _BONUS.get(run, 0)


def rack_points(rack: Sequence[int], descending: bool = False) -> int:
    """What a player who did not go out scores: 5 per card of the scored sequence."""
    return CARD_POINTS * scored_length(rack, descending)
