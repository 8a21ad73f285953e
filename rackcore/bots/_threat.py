"""What the other seats are up to: how close they look to going out, and what they want.

A seat's rack is read from what it showed: the cards it took from the discard pile
and where it put them (``known``), and its visible center. Those cards are keepers
it chose; the hidden slots are open. How much a card would help that seat is how
many turns it would save it, by the same rack value the bot uses for itself. Only
the next seat can take a card this seat discards (everyone else sees it buried).
"""

from __future__ import annotations

import math

from rackcore.bots._board import Board
from rackcore.bots._pool import Pool
from rackcore.bots._value import INF, Planner

__all__ = ["Denial", "closeness", "hazard"]

SLOTS = 10
# A typical winner needs about this many own turns; closeness grows towards it.
_TYPICAL_TURNS = 16.0
_OUT_POINTS = 75


def closeness(board: Board, seat: int) -> float:
    """0..1: how near ``seat`` looks to going out, from its turns and what it showed."""
    view = board.view
    shown = sum(1 for c in board.known[seat] if c)
    turns = view.turns_taken[seat] if view.turns_taken else 0
    return min(1.0, (turns + 2 + shown) / _TYPICAL_TURNS)


def _near_target(board: Board, seat: int) -> bool:
    """Would ``seat``'s side reach the target by going out now?"""
    rules, view = board.view.rules, board.view
    totals = [0] * rules.sides
    for s, score in enumerate(view.scores):
        totals[rules.side_of(s)] += score
    return totals[rules.side_of(seat)] + _OUT_POINTS >= rules.target


def hazard(board: Board) -> float:
    """Chance per round of turns that some opposing seat goes out."""
    rules = board.view.rules
    mine = rules.side_of(board.seat)
    total = 0.0
    for seat in range(board.players):
        if rules.side_of(seat) != mine:
            total += 0.15 * closeness(board, seat)
    return min(0.9, total)


class Denial:
    """The price, in own turns, of handing a card to the next seat."""

    __slots__ = ("_base", "_cache", "_opens", "_planner", "_weight")

    def __init__(self, board: Board, pool: Pool, weight: float) -> None:
        rules = board.view.rules
        nxt = (board.seat + 1) % board.players
        self._cache: dict[int, float] = {}
        self._weight = 0.0
        if weight <= 0 or rules.side_of(nxt) == rules.side_of(board.seat):
            return
        self._weight = weight * closeness(board, nxt) * (1.5 if _near_target(board, nxt) else 1.0)
        self._planner = Planner(board.known[nxt], pool, board.run)
        self._base = self._planner.value()
        self._opens = [self._planner.open_cost(s) for s in range(SLOTS)]

    def penalty(self, card: int) -> float:
        """Turns this seat gives up by discarding ``card``."""
        if self._weight == 0.0:
            return 0.0
        cached = self._cache.get(card)
        if cached is None:
            best = min(self._planner.place_cost(card, s, self._opens[s]) for s in range(SLOTS))
            gain = self._base - math.sqrt(best) if best < INF and self._base < INF else 0.0
            cached = self._weight * max(0.0, gain)
            self._cache[card] = cached
        return cached
