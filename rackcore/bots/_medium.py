"""Medium and easy: a sound rack sense without card counting; easy misjudges it often.

Medium values racks like the hard bot (``_value``) but against a naive pool: every
card it does not hold might come. It takes the top discard when placing it beats
its current rack by a clear margin, otherwise draws from the stock, and resolves
with the placement that leaves the best rack, or throws. It never looks at what
the other seats collect, never plans with the stock's order, and always goes out.

Easy is the same player with blurred judgement: each option's value gets random
noise, so it often keeps a worse card, misses a useful discard, or breaks a good
slot. It still finishes rounds, because a winning rack always wins outright.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from rackcore import Move, View
from rackcore.bots._board import Board
from rackcore.bots._options import Option, options, swapped
from rackcore.bots._pool import Pool
from rackcore.bots._value import Planner

__all__ = ["Easy", "Medium", "SimpleParams"]

SLOTS = 10


@dataclass(frozen=True, slots=True)
class SimpleParams:
    take_margin: float = 0.5  # turns the top discard must save to be taken
    repair_gain: float = 1.0  # turns a swap must save to spend the repair token
    noise: float = 0.0  # spread of the random error on each option, in turns
    uses_repair: bool = True


class Medium:
    """A sound player that does not count cards (see the module docstring)."""

    level = "medium"
    params = SimpleParams(noise=0.3)

    def choose(self, view: View, rng: random.Random) -> Move:
        board = Board.of(view)
        held = [board.held] if board.held is not None else []
        pool = Pool.uniform(board.n, [*board.rack, *held])
        planner = Planner(board.rack, pool, board.run)
        if view.phase == "draw":
            return self._draw(board, planner, rng)
        return self._resolve(board, pool, planner, rng)

    def _judge(self, opts: list[Option], rng: random.Random) -> tuple[float, Option]:
        """The option that looks best, as turns (lower is better), after any noise."""
        noise = self.params.noise
        best_turns, best = float("inf"), opts[0]
        for o in opts:
            if o.wins:
                return -1.0, o
            turns = o.turns + (rng.gauss(0.0, noise) if noise else 0.0)
            if turns < best_turns:
                best_turns, best = turns, o
        return best_turns, best

    def _draw(self, board: Board, planner: Planner, rng: random.Random) -> Move:
        top = board.top
        if top is not None:
            turns = self._judge(options(planner, top, False), rng)[0]
            if turns < planner.value() - self.params.take_margin or board.stock_ends:
                return Move.draw(board.seat, "discard")
        return Move.draw(board.seat, "stock")

    def _resolve(self, board: Board, pool: Pool, planner: Planner, rng: random.Random) -> Move:
        if board.held is None:
            raise ValueError("the view shows no held card to resolve")
        can_throw = board.held_from == "stock"
        turns, best = self._judge(options(planner, board.held, can_throw), rng)
        if board.can_repair and self.params.uses_repair and not best.wins:
            target = turns - self.params.repair_gain
            swap = -1
            for i in range(SLOTS - 1):
                other = Planner(swapped(board.rack, i), pool, board.run)
                t = self._judge(options(other, board.held, can_throw), rng)[0]
                if t < target:
                    swap, target = i, t
            if swap >= 0:
                return Move.repair(board.seat, swap)
        if best.slot is None:
            return Move.throw(board.seat)
        return Move.place(board.seat, best.slot)


class Easy(Medium):
    """A beginner: medium's rack sense, blurred by noise, and no repairs."""

    level = "easy"
    params = SimpleParams(take_margin=1.0, noise=1.5, uses_repair=False)
