"""A finished table's result, as the profile store takes it (``MatchResult``).

Built from the table's stored facts and its move log, replayed through rackcore's public
API (a fresh ``Match`` from the rules and seed, every logged move applied), so it is the
same whichever replica builds it, at the finish or from a sweep after a crash:

- ``score``: the final score of the seat's side (its own without partners);
- ``place``: 1 + the number of sides with a seat placed better, better meaning not left
  before left, then the match's winner (who may have won a tie on points by the rules'
  tiebreak), then a higher score: other equal scores share a place, and seats that left
  for good rank after everyone else (tied among themselves);
- ``won``: the seat's side won the match; ``rounds_won``: rounds the seat went out in;
- ``own_turns_to_go_out``: per round the seat went out in, its own turns in that round;
- ``own_turns``: every turn the seat took, all rounds together;
- ``best_bonus_run``: the longest run it went out with that scores a bonus (3 or more
  adjacent consecutive cards), 0 if none did.

A seat has a profile only if a human played it with one (bots never); ``rated`` is the
table's (the store rates only a rated match with two or more profiled seats).
"""

from __future__ import annotations

from typing import Any

from rackcore import Match, Move, Rules, bonus_for_run, longest_run
from services.archive.profiles import MatchResult, SeatResult
from services.table.stored import TableMeta, TableState
from services.table.table import Table

__all__ = ["places", "result_of", "result_of_log"]


def places(
    scores: list[int], left: list[bool], sides: list[int], winner: int | None = None
) -> list[int]:
    """Each seat's place: 1 + the number of sides with a seat placed better (not left
    before left, then the winning side ``winner``, then the higher score). Ties share a
    place; leavers come last."""

    def key(seat: int) -> tuple[bool, bool, int]:
        return left[seat], sides[seat] != winner, -scores[seat]

    seats = range(len(scores))
    return [1 + len({sides[o] for o in seats if key(o) < key(seat)}) for seat in seats]


def result_of(table: Table, finished_at_ms: int) -> MatchResult:
    """The result of a finished table (its log replayed)."""
    moves = [move.to_dict() for move in table.match.history]
    return result_of_log(table.meta, table.state, moves, finished_at_ms)


def result_of_log(
    meta: TableMeta, state: TableState, moves: list[dict[str, Any]], finished_at_ms: int
) -> MatchResult:
    """The result of the table ``meta`` whose log is ``moves`` (``Move.to_dict`` each)."""
    rules = Rules.from_dict(meta.rules)
    match = Match(rules, bytes.fromhex(meta.seed))
    n = rules.players
    rounds_won = [0] * n
    turns: list[list[int]] = [[] for _ in range(n)]
    best_run = [0] * n
    own_turns = [0] * n
    seen = 0
    for data in moves:
        match.apply(Move.from_dict(data))
        if len(match.rounds) > seen:
            seen = len(match.rounds)
            winner = match.rounds[-1].winner
            own_turns = [
                total + taken for total, taken in zip(own_turns, match.turns_taken, strict=True)
            ]
            if winner is not None:
                rounds_won[winner] += 1
                turns[winner].append(match.turns_taken[winner])
                run = longest_run(match.racks[winner], rules.descending)
                if bonus_for_run(run) > 0:
                    best_run[winner] = max(best_run[winner], run)
    totals = match.side_totals()
    outcome = match.outcome()
    left = list(state.left) if len(state.left) == n else [False] * n
    sides = [rules.side_of(seat) for seat in range(n)]
    scores = [totals[side] for side in sides]
    placed = places(scores, left, sides, None if outcome is None else outcome.winner)
    seats = []
    for seat, seat_meta in enumerate(meta.seats):
        seats.append(
            SeatResult(
                seat=seat,
                name=seat_meta.name,
                profile="" if seat_meta.bot else seat_meta.profile,
                bot=seat_meta.bot,
                left=left[seat],
                score=scores[seat],
                place=placed[seat],
                won=outcome is not None and outcome.winner == rules.side_of(seat),
                rounds_won=rounds_won[seat],
                own_turns_to_go_out=tuple(turns[seat]),
                best_bonus_run=best_run[seat],
                own_turns=own_turns[seat],
            )
        )
    teams = ((0, 2), (1, 3)) if rules.partners else ()
    return MatchResult(
        table_id=meta.table_id,
        finished_at_ms=finished_at_ms,
        players=n,
        rated=meta.rated,
        daily=meta.daily,
        seats=tuple(seats),
        teams=teams,
    )
