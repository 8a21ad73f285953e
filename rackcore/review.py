"""Review one seat's play in a finished match, from what that seat could see (docs/review.md).

``review(log, seat)`` replays the log with rackcore's own state machine. At every
decision of ``seat`` it takes that seat's ``View`` — the same redaction the bots
get — and hands only the view to the judge (the hard player's ``assess``). The
judge never receives the match: its signature is ``(view: View) -> Assessment``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rackcore._errors import LogError, RackError
from rackcore._log import FORMAT as LOG_FORMAT
from rackcore._log import match_from_log
from rackcore._moves import Move
from rackcore._view import View, observe
from rackcore.bots import Assessment, assess

__all__ = ["FORMAT", "MARKS", "Decision", "Judge", "Review", "mark_for", "review"]

FORMAT = "rackem-review/1"
MARKS: tuple[tuple[str, float], ...] = (
    ("best", 0.01),
    ("good", 0.03),
    ("inaccuracy", 0.1),
    ("mistake", 0.3),
    ("blunder", math.inf),
)
"""Each mark and the largest cost in own turns it takes (docs/review.md)."""
COST_CAP = 20.0
"""A cost the judge cannot price (a move no plan recovers from) counts this many turns."""

Judge = Callable[[View], Assessment]


def mark_for(cost: float) -> str:
    """The mark of a decision that gave up ``cost`` own turns against the best move."""
    for name, limit in MARKS:
        if cost <= limit:
            return name
    return MARKS[-1][0]


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision of the reviewed seat: ``at`` indexes the log's ``moves``."""

    at: int
    round: int  # 1-based
    turn: int  # the seat's own turn in that round, 1-based
    by: str | None
    kind: str  # "draw" or "resolve"
    played: Move
    best: Move
    cost: float  # own turns given up against ``best``
    mark: str
    rack: tuple[int, ...]  # the seat's rack before the move (not in the JSON form)
    card: int | None  # the top discard (draw) or the held card (resolve)

    def to_dict(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "round": self.round,
            "turn": self.turn,
            "by": self.by,
            "kind": self.kind,
            "played": _plain(self.played),
            "best": _plain(self.best),
            "cost": round(self.cost, 2),
            "mark": self.mark,
        }


@dataclass(frozen=True, slots=True)
class Review:
    """Every decision of ``seat`` with its cost and mark, and the summary of them."""

    seat: int
    decisions: tuple[Decision, ...]

    @property
    def marks(self) -> dict[str, int]:
        counts = {name: 0 for name, _ in MARKS}
        for d in self.decisions:
            counts[d.mark] += 1
        return counts

    @property
    def accuracy(self) -> float:
        """Percent of decisions marked best or good (100 with no decisions)."""
        if not self.decisions:
            return 100.0
        marks = self.marks
        return 100.0 * (marks["best"] + marks["good"]) / len(self.decisions)

    @property
    def costliest(self) -> tuple[int, ...]:
        """Indices into ``decisions`` of up to three that cost anything, costliest first."""
        costly = [i for i, d in enumerate(self.decisions) if d.cost > 0]
        costly.sort(key=lambda i: -self.decisions[i].cost)  # stable: earlier first on ties
        return tuple(costly[:3])

    def to_dict(self) -> dict[str, Any]:
        """The ``rackem-review/1`` JSON form."""
        return {
            "format": FORMAT,
            "seat": self.seat,
            "decisions": [d.to_dict() for d in self.decisions],
            "summary": {
                "decisions": len(self.decisions),
                "accuracy": round(self.accuracy, 1),
                "marks": self.marks,
                "costliest": list(self.costliest),
            },
        }


def review(log: dict[str, Any], seat: int, *, judge: Judge = assess) -> Review:
    """Review every decision of ``seat`` in ``log``, a match whose seed is revealed.

    Raises ``LogError`` for a log that is not a ``rackem-match/1`` log, whose seed is
    not revealed (a running match), or whose moves do not replay; ``RackError`` for a
    seat not at the table.
    """
    if (
        isinstance(log, dict)
        and log.get("format") == LOG_FORMAT
        and not {"seed", "decks"} & set(log)
    ):
        raise LogError("the log's seed is not revealed: only a finished match can be reviewed")
    match = match_from_log(log)
    if type(seat) is not int or not 0 <= seat < match.players:
        raise RackError(f"no seat {seat} at this table")
    decisions: list[Decision] = []
    for at, data in enumerate(log["moves"]):
        try:
            move = Move.from_dict(data)
            if match.phase == "round_over" and move.seat == seat:
                match.next_round()
            view = observe(match, seat) if move.seat == seat else None
            match.apply(move)  # refuses an illegal move before it is judged
            if view is not None:
                decisions.append(_decide(at, view, move, judge))
        except LogError:
            raise
        except RackError as exc:
            raise LogError(f"move {at} does not replay: {exc}") from None
    return Review(seat, tuple(decisions))


def _decide(at: int, view: View, move: Move, judge: Judge) -> Decision:
    judged = judge(view)
    cost = judged.cost(move)
    if not cost < COST_CAP:
        cost = COST_CAP
    return Decision(
        at=at,
        round=view.round_no,
        turn=view.turns_taken[view.seat] + 1,
        by=move.by,
        kind=judged.kind,
        played=move.with_by(None),
        best=judged.best,
        cost=cost,
        mark=mark_for(cost),
        rack=view.rack,
        card=view.held if view.phase == "resolve" else (view.discard[-1] if view.discard else None),
    )


def _plain(move: Move) -> dict[str, Any]:
    out = move.to_dict()
    del out["seat"]
    out.pop("by", None)
    return out
