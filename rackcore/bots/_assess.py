"""The hard player's judgement of every move a ``View`` allows: what a review compares.

``assess(view)`` prices each legal move of the decision the view faces in own
turns, by the hard player's own measures (``Hard``'s utilities, negated):

- **draw**: the stock is the average over the cards it may give of each card's
  best resolution; the discard is its best placement (less ``take_margin``);
- **resolve**: each placement and the throw is the rack value it leaves plus the
  denial price of the card it discards; going out counts as ``-1`` (``-1 - bonus /
  1000`` with a run). With ``lookahead``, the options hard re-ranks are priced as it
  re-ranks them (the expected turns after the next stock draw) and the others keep
  their distance from the first of them; a repair is priced against the resolution
  hard would play by what the swap wins beyond ``repair_gain``.

Hard's utilities are in units of its rack value, which reads about five times the
turns a rack still needs (a fresh deal reads about 50, while a round lasts about 10).
Every price is scaled by ``TURNS_PER_UNIT``, fitted to hard's own play
(``bench/hard_value_fit.py``), so a cost is in own turns as they are played.

``best`` is the move ``Hard`` plays for the same view. Only the view is read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rackcore import Move, View
from rackcore.bots._board import Board
from rackcore.bots._hard import Hard, hard_pool
from rackcore.bots._options import Option, options, swapped
from rackcore.bots._pool import Pool
from rackcore.bots._threat import Denial
from rackcore.bots._value import Planner

__all__ = ["STAY_IN_COST", "TURNS_PER_UNIT", "Assessment", "assess"]

SLOTS = 10
STAY_IN_COST = 1.0
"""Turns a winning rack loses by not going out, unless the hard player would stay in too."""
TURNS_PER_UNIT = 0.22
"""Own turns per unit of hard's rack value: ``b`` of ``bench/hard_value_fit.py`` (docs/bots.md)."""
_HARD = Hard()


@dataclass(frozen=True, slots=True)
class Assessment:
    """Every legal move of one decision, priced in own turns (lower is better), and the best."""

    kind: str  # "draw" or "resolve"
    turns: dict[Move, float]
    best: Move

    def cost(self, move: Move) -> float:
        """Own turns ``move`` gives up against ``best`` (0 for the best; ``inf`` if unpriced)."""
        played = self.turns.get(move.with_by(None), math.inf)
        best = self.turns[self.best]
        if played == best:
            return 0.0
        return max(0.0, played - best)


def assess(view: View) -> Assessment:
    """The hard player's price of every legal move of ``view`` (its seat must be to move)."""
    if not view.my_turn:
        raise ValueError(f"it is not seat {view.seat}'s turn")
    board = Board.of(view)
    pool = hard_pool(board, _HARD.params)
    planner = _HARD.planner(board.rack, pool, board.run)
    denial = Denial(board, pool, _HARD.params.denial)
    if view.phase == "draw":
        judged = _draw(board, planner, denial)
    else:
        judged = _resolve(board, pool, planner, denial)
    turns = {move: price * TURNS_PER_UNIT for move, price in judged.turns.items()}
    return Assessment(judged.kind, turns, judged.best)


def _draw(board: Board, planner: Planner, denial: Denial) -> Assessment:
    seat, top = board.seat, board.top
    stock, discard = Move.draw(seat, "stock"), Move.draw(seat, "discard")
    if top is None:
        return Assessment("draw", {stock: 0.0}, stock)
    opens = [planner.open_cost(s) for s in range(SLOTS)]
    take = _HARD._best(options(planner, top, False, opens), denial)[0]
    take -= _HARD.params.take_margin
    cards = board.stock_draws()
    if not cards:  # a stock draw ends the round with no winner: hard never does it
        return Assessment("draw", {stock: math.inf, discard: -take}, discard)
    util = sum(_HARD._draw_util(planner, c, opens, denial) for c in cards) / len(cards)
    turns = {stock: -util, discard: -take}
    return Assessment("draw", turns, discard if take > util else stock)


def _resolve(board: Board, pool: Pool, planner: Planner, denial: Denial) -> Assessment:
    if board.held is None:
        raise ValueError("the view shows no held card to resolve")
    seat, card, can_throw = board.seat, board.held, board.held_from == "stock"
    opts = options(planner, card, can_throw)
    price = [-_HARD._best([o], denial)[0] for o in opts]
    util, chosen = _HARD._best(opts, denial)
    cards = board.stock_draws()
    if _HARD.params.lookahead and not chosen.wins and cards:
        chosen, price = _look_ahead(board, pool, opts, price, denial, cards)
    turns: dict[Move, float] = {}
    for o, p in zip(opts, price, strict=True):
        stays = o.wins and not _HARD._stay_in(board, pool, o)
        stay = p + STAY_IN_COST / TURNS_PER_UNIT if stays else p
        turns[_move(seat, o, True)] = p
        turns[_move(seat, o, False)] = stay
    best = _move(seat, chosen, not (chosen.wins and _HARD._stay_in(board, pool, chosen)))
    if board.can_repair:
        line = util + _HARD.params.repair_gain  # what a swap must beat
        bar, base = line, turns[best]
        for i in range(SLOTS - 1):
            other = _HARD.planner(swapped(board.rack, i), pool, board.run)
            u = _HARD._best(options(other, card, can_throw), denial)[0]
            turns[Move.repair(seat, i)] = base + line - u  # below ``base`` when a swap wins
            if not chosen.wins and u > bar:  # the first of the swaps that win the most
                best, bar = Move.repair(seat, i), u
    return Assessment("resolve", turns, best)


def _look_ahead(
    board: Board,
    pool: Pool,
    opts: list[Option],
    price: list[float],
    denial: Denial,
    cards: tuple[int, ...],
) -> tuple[Option, list[float]]:
    """``Hard._look_ahead``'s pick, and every option priced on the scale it re-ranks by.

    The best few options (by their plain price) are priced by the expected own turns
    after the next stock draw; the others keep their plain distance from the first.
    """
    order = sorted(range(len(opts)), key=lambda i: opts[i].turns + denial.penalty(opts[i].out))
    ahead: dict[int, float] = {}
    best_util, best = -math.inf, order[0]
    for i in order[: _HARD.params.lookahead]:
        o = opts[i]
        rack = board.rack if o.slot is None else swapped_in(board.rack, o.slot, o.card)
        after = _HARD.planner(rack, pool, board.run)
        opens = [after.open_cost(s) for s in range(SLOTS)]
        total = sum(min(0.0, _HARD._draw_util(after, c, opens, denial)) for c in cards)
        u = total / len(cards) - denial.penalty(o.out)
        ahead[i] = -u
        if u > best_util:
            best_util, best = u, i
    shift = ahead[order[0]] - price[order[0]]
    if math.isnan(shift):
        shift = 0.0
    return opts[best], [ahead.get(i, p + shift) for i, p in enumerate(price)]


def swapped_in(rack: tuple[int, ...], slot: int, card: int) -> tuple[int, ...]:
    """The rack with ``card`` in ``slot``."""
    return (*rack[:slot], card, *rack[slot + 1 :])


def _move(seat: int, option: Option, go_out: bool) -> Move:
    if option.slot is None:
        return Move.throw(seat, go_out)
    return Move.place(seat, option.slot, go_out)
