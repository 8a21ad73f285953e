"""How a table's own state moves on around the match: status, clocks, covers, round over.

Pure changes to a ``TableState`` from the match, the seats and the time; the table
makes them under its lock and then stores the result.
"""

from __future__ import annotations

from rackcore import Match
from services.table.stored import TableMeta, TableState

__all__ = ["abandon", "after_move", "cover", "deal", "seat_kind"]


def seat_kind(meta: TableMeta, state: TableState, seat: int) -> str:
    """``bot`` (a bot seat, or a human's seat left for good), ``cover`` or ``human``."""
    if meta.seats[seat].bot or state.left[seat]:
        return "bot"
    return "cover" if state.covered[seat] else "human"


def _turn(match: Match, meta: TableMeta, state: TableState, now: int, decision_ms: int) -> None:
    state.status = "playing"
    human = seat_kind(meta, state, match.turn) == "human"
    state.deadline_ms = now + decision_ms if human else 0


def after_move(
    match: Match, meta: TableMeta, state: TableState, now: int, decision_ms: int, continue_ms: int
) -> None:
    """The move just applied ended the match, the round, or a decision: set what follows."""
    if match.phase == "match_over":
        state.status = "finished"
        state.ended_reason = "finished"
        state.deadline_ms = 0
    elif match.phase == "round_over":
        state.status = "round_over"
        state.deadline_ms = 0
        state.continue_deadline_ms = now + continue_ms
        state.continued = [False] * len(meta.seats)
    else:
        _turn(match, meta, state, now, decision_ms)


def deal(match: Match, meta: TableMeta, state: TableState, now: int, decision_ms: int) -> None:
    """Round over is over: deal the next round and start its first clock."""
    match.next_round()
    state.dealt_round = match.round_no
    state.continued = [False] * len(meta.seats)
    state.continue_deadline_ms = 0
    _turn(match, meta, state, now, decision_ms)


def cover(state: TableState, seat: int) -> None:
    """The human to move let the clock run out: a bot plays the seat until they act."""
    state.covered[seat] = True
    state.deadline_ms = 0


def abandon(state: TableState) -> None:
    state.status = "ended"
    state.ended_reason = "abandoned"
    state.deadline_ms = 0
