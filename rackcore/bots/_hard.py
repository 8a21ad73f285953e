"""Hard: counts every card, reads the known stock, weighs each draw, and denies the next seat.

- **Pool.** A card still unseen (in the stock or a hidden slot) weighs 1; a card in
  the discard pile comes back only after a recycle and weighs less; a card in any
  rack that someone showed, or a visible center, weighs 0. Once the stock's order
  is public, the stock's cards weigh 1 and hidden cards little; so too after a
  shuffled recycle, whose stock can only hold cards that were discarded this round.
- **Draw.** The top discard is worth its best placement; the stock is worth the
  average over the cards it may give of each card's best resolution — or exactly
  the known card when the stock's order is public. The better one is drawn.
- **Resolve.** Every slot and the throw is valued by the rack it leaves
  (``_value``, with a missing run card's wait scaled by ``run_wait``, the run-free
  plan weighed in by ``plain_weight`` and a floor per open slot, both fitted to
  hard's own play by ``bench/hard_value_fit.py``), less the
  turns the discarded card would save the next seat (``_threat.Denial``) — unless it
  goes out. The ``lookahead`` best are then re-ranked by the expected utility after
  the next stock draw. The repair token is spent on the swap that wins the most, if
  it wins enough.
- **Going out.** Always, except with ``bonus`` when a longer run is likely enough
  before an opponent goes out, and never when going out now wins the match.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from rackcore import Move, View, bonus_for_run
from rackcore.bots._board import Board
from rackcore.bots._options import Option, options, swapped
from rackcore.bots._pool import Pool
from rackcore.bots._threat import Denial, hazard
from rackcore.bots._value import Planner

__all__ = ["HARD_2025", "Hard", "HardParams"]

SLOTS = 10
_NEG = float("-inf")


@dataclass(frozen=True, slots=True)
class HardParams:
    """The hard bot's dials, set by tournaments (docs/bots.md)."""

    pile_weight: float = 0.35  # a card in the discard pile, while the stock is unknown
    known_pile_weight: float = 0.6  # ... once the stock's order is public
    known_hidden_weight: float = 0.15  # a hidden card once the stock's order is public
    denial: float = 0.03  # own turns given up per turn saved for the next seat
    take_margin: float = 0.0  # the discard must beat the stock by this many turns
    repair_gain: float = 0.75  # turns a swap must win to spend the repair token
    run_wait: float = 0.7  # scales the wait for a missing run card (``Planner.run_wait``)
    lookahead: int = 5  # best resolutions re-ranked by the value after the next draw
    plain_weight: float = 0.6  # weight of the plain (run-free) plan's root (``Planner``)
    open_floor: float = 16.0  # squared turns every open slot costs at least (``Planner``)


# Hard as it played until issue 31 (``rackem tournament --bots hard,hard-2025``).
HARD_2025 = HardParams(denial=0.075, run_wait=1.0, lookahead=0, plain_weight=0.0, open_floor=0.0)


def hard_pool(board: Board, params: HardParams) -> Pool:
    n = board.n
    weight = [0.0] * (n + 2)
    stock = board.stock_known if board.stock_known is not None else board.recycled
    if stock is not None:
        for c in board.unseen:
            weight[c] = params.known_hidden_weight
        for c in stock:
            weight[c] = 1.0
        pile = params.known_pile_weight
    else:
        for c in board.unseen:
            weight[c] = 1.0
        pile = params.pile_weight
    for c in board.discard:
        weight[c] = pile
    return Pool(n, weight)


class Hard:
    """The hard level (see the module docstring)."""

    def __init__(self, params: HardParams | None = None, level: str = "hard") -> None:
        self.params = params or HardParams()
        self.level = level

    def choose(self, view: View, rng: random.Random) -> Move:
        board = Board.of(view)
        pool = hard_pool(board, self.params)
        planner = self.planner(board.rack, pool, board.run)
        denial = Denial(board, pool, self.params.denial)
        if view.phase == "draw":
            return self._draw(board, planner, denial)
        return self._resolve(board, pool, planner, denial)

    def planner(self, rack: Sequence[int], pool: Pool, run: int) -> Planner:
        """The rack value with hard's dials."""
        p = self.params
        return Planner(rack, pool, run, p.run_wait, p.plain_weight, p.open_floor)

    # -- drawing ---------------------------------------------------------------

    def _draw(self, board: Board, planner: Planner, denial: Denial) -> Move:
        top = board.top
        if top is None:
            return Move.draw(board.seat, "stock")
        opens = [planner.open_cost(s) for s in range(SLOTS)]
        take = self._best(options(planner, top, False, opens), denial)[0]
        cards = board.stock_draws()
        if not cards:  # a stock draw would end the round: keep playing
            return Move.draw(board.seat, "discard")
        stock = sum(self._draw_util(planner, card, opens, denial) for card in cards) / len(cards)
        if take > stock + self.params.take_margin:
            return Move.draw(board.seat, "discard")
        return Move.draw(board.seat, "stock")

    def _draw_util(self, planner: Planner, card: int, opens: list[float], denial: Denial) -> float:
        """``_best`` of a card drawn from the stock, without building the options."""
        costs = [(planner.place_cost(card, s, opens[s]), s) for s in range(SLOTS)]
        costs.append((planner.cost, -1))  # the throw
        costs.sort()
        if costs[0][0] == 0.0:
            return 1.0
        best = _NEG
        for cost, s in costs:
            turns = math.sqrt(cost)
            if -turns <= best:
                break
            util = -turns - denial.penalty(card if s < 0 else planner.rack[s])
            if util > best:
                best = util
        return best

    # -- resolving -------------------------------------------------------------

    def _resolve(self, board: Board, pool: Pool, planner: Planner, denial: Denial) -> Move:
        if board.held is None:
            raise ValueError("the view shows no held card to resolve")
        can_throw = board.held_from == "stock"
        opts = options(planner, board.held, can_throw)
        util, best = self._best(opts, denial)
        if self.params.lookahead and not best.wins:
            best = self._look_ahead(board, pool, opts, denial)
        if board.can_repair and not best.wins:
            swap, swap_util = -1, util + self.params.repair_gain
            for i in range(SLOTS - 1):
                other = self.planner(swapped(board.rack, i), pool, board.run)
                u = self._best(options(other, board.held, can_throw), denial)[0]
                if u > swap_util:
                    swap, swap_util = i, u
            if swap >= 0:
                return Move.repair(board.seat, swap)
        go_out = not (best.wins and self._stay_in(board, pool, best))
        if best.slot is None:
            return Move.throw(board.seat, go_out)
        return Move.place(board.seat, best.slot, go_out)

    def _best(self, opts: Sequence[Option], denial: Denial) -> tuple[float, Option]:
        """The option with the highest utility: fewest turns, least help to the next seat.

        A winning option beats everything (the longest run first, for the bonus). The
        denial price only lowers a utility, so it is asked for in order of turns and
        only while an option can still win.
        """
        winning = [o for o in opts if o.wins]
        if winning:
            best = max(winning, key=lambda o: o.run)
            return 1.0 + bonus_for_run(best.run) / 1000.0, best
        best_util, best = _NEG, opts[0]
        for o in sorted(opts, key=lambda o: o.turns):
            if -o.turns <= best_util:
                break
            util = -o.turns - denial.penalty(o.out)
            if util > best_util:
                best_util, best = util, o
        return best_util, best

    def _look_ahead(
        self, board: Board, pool: Pool, opts: Sequence[Option], denial: Denial
    ) -> Option:
        """Re-rank the best few options by the expected utility after the next stock draw."""
        cards = board.stock_draws()
        if not cards:
            return self._best(opts, denial)[1]
        ranked = sorted(opts, key=lambda o: o.turns + denial.penalty(o.out))
        best_util, best = _NEG, ranked[0]
        for o in ranked[: self.params.lookahead]:
            rack = board.rack if o.slot is None else _placed(board.rack, o.slot, o.card)
            after = self.planner(rack, pool, board.run)
            opens = [after.open_cost(s) for s in range(SLOTS)]
            total = 0.0
            for card in cards:
                u = self._draw_util(after, card, opens, denial)
                total += 0.0 if u > 0 else u
            util = total / len(cards) - denial.penalty(o.out)
            if util > best_util:
                best_util, best = util, o
        return best

    # -- going out -------------------------------------------------------------

    def _stay_in(self, board: Board, pool: Pool, option: Option) -> bool:
        """With ``bonus``: keep playing for a longer run when that is worth the risk."""
        rules, view = board.view.rules, board.view
        step = _bonus_step(option.run)
        if not rules.bonus or step == 0:
            return False
        side = rules.side_of(board.seat)
        totals = [0] * rules.sides
        for s, score in enumerate(view.scores):
            totals[rules.side_of(s)] += score
        if totals[side] + 75 + bonus_for_run(option.run) >= rules.target:
            return False  # going out now reaches the target: take it
        rack = list(board.rack)
        if option.slot is not None:
            rack[option.slot] = option.card
        chance = sum(pool.weight[c] for c in _extensions(rack, option.run)) / pool.total
        risk = hazard(board) * (100 + bonus_for_run(option.run))
        return chance * step > risk


def _placed(rack: tuple[int, ...], slot: int, card: int) -> tuple[int, ...]:
    """The rack with ``card`` in ``slot``."""
    return (*rack[:slot], card, *rack[slot + 1 :])


def _bonus_step(run: int) -> int:
    """Extra bonus points for making the longest run one card longer."""
    return bonus_for_run(run + 1) - bonus_for_run(run)


def _extensions(rack: Sequence[int], run: int) -> list[int]:
    """Cards that make a longest run of the (winning) ``rack`` longer and keep it winning."""
    found: list[int] = []
    start = 0
    for i in range(1, SLOTS + 1):
        if i < SLOTS and rack[i] == rack[i - 1] + 1:
            continue
        if i - start >= run:
            low, high = rack[start] - 1, rack[i - 1] + 1
            if start > 0 and (start < 2 or rack[start - 2] < low) and low >= 1:
                found.append(low)  # placed in slot start - 1
            if i < SLOTS and (i + 1 >= SLOTS or high < rack[i + 1]):
                found.append(high)  # placed in slot i
        start = i
    return found
