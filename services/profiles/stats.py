"""A profile's stats: what it keeps per player count, and the protocol's ``stats`` object.

Stored (``profiles.stats``, JSON) per player count, the sums only::

    {"2": {"played", "won", "rounds_won", "go_outs", "own_turns_to_go_out", "best_bonus_run"}, …}

``go_outs`` and ``own_turns_to_go_out`` (the sum of its own turns over the rounds it went
out in) make the mean that players see; the totals are the sums over player counts (the
best bonus run: the best of them). Every match a profile finished counts, rated or not.
"""

from __future__ import annotations

from typing import Any

from services.archive.profiles import SeatResult

__all__ = ["add_match", "shown"]

_SUMS = ("played", "won", "rounds_won", "go_outs", "own_turns_to_go_out")


def _empty() -> dict[str, int]:
    return dict.fromkeys((*_SUMS, "best_bonus_run"), 0)


def add_match(stored: dict[str, Any], players: int, seat: SeatResult) -> dict[str, Any]:
    """``stored`` with one more match of ``players`` seats played from ``seat``."""
    counts = {**_empty(), **stored.get(str(players), {})}
    counts["played"] += 1
    counts["won"] += int(seat.won)
    counts["rounds_won"] += seat.rounds_won
    counts["go_outs"] += len(seat.own_turns_to_go_out)
    counts["own_turns_to_go_out"] += sum(seat.own_turns_to_go_out)
    counts["best_bonus_run"] = max(counts["best_bonus_run"], seat.best_bonus_run)
    return {**stored, str(players): counts}


def _view(counts: dict[str, int]) -> dict[str, Any]:
    go_outs = counts["go_outs"]
    mean = round(counts["own_turns_to_go_out"] / go_outs, 2) if go_outs else None
    return {
        "played": counts["played"],
        "won": counts["won"],
        "rounds_won": counts["rounds_won"],
        "mean_own_turns_to_go_out": mean,
        "best_bonus_run": counts["best_bonus_run"],
    }


def shown(stored: dict[str, Any]) -> dict[str, Any]:
    """The protocol's ``stats`` object (docs/protocol.md) of what is stored."""
    by_players = {
        players: {**_empty(), **counts}
        for players, counts in sorted(stored.items(), key=lambda kv: int(kv[0]))
    }
    total = _empty()
    for counts in by_players.values():
        for key in _SUMS:
            total[key] += counts[key]
        total["best_bonus_run"] = max(total["best_bonus_run"], counts["best_bonus_run"])
    return {
        **_view(total),
        "by_players": {players: _view(counts) for players, counts in by_players.items()},
    }
