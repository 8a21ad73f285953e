"""Fit the hard player's rack value to its own play: the numbers in ``HardParams``.

Run ``python3 bench/hard_value_fit.py --rounds 1000 --jobs 2``. It plays two-player
single rounds between hard players, with the run rule, and plays each round on past
its first finisher: a seat whose rack wins stops there (it draws from the stock and
throws, never going out), so every seat's own turns to a winning rack are known,
not only the winner's. At every draw decision it records the seat's view and the
own turns that seat still needed.

Then it fits, by least squares (pure Python, three unknowns),

    turns still needed ≈ a + b·√C + c·√P

where ``C`` is the cheapest plan's cost with the run and ``P`` the cheapest plan's
cost without it (``rackcore/bots/_value.py``), both at ``plain_weight`` 0 and with
the players' ``open_floor``. The rack
value hard plays by is ``√C + w·√P`` with ``w = c / b`` (``HardParams.plain_weight``),
and its calibration to own turns, ``a + b·value``, is what a review's costs are
measured in (``TURNS_PER_UNIT`` in ``rackcore/bots/_assess.py``). It prints the
fit, its R² beside that of √C alone, and a table of predicted against measured
turns. docs/bots.md has the run the shipped numbers come from.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import random
from collections.abc import Sequence
from typing import Any

from rackcore import Match, Move, Rules, is_winning, observe
from rackcore.bots import Hard, HardParams
from rackcore.bots._board import Board
from rackcore.bots._hard import hard_pool
from rackcore.bots._value import Planner
from rackem.tournament import match_seed

RULES = {"players": 2, "target": 50, "max_recycles": 10}


def play(job: tuple[str, int, dict[str, Any]]) -> list[tuple[float, float, int]]:
    """One round played past its first finisher: (√C, √P, own turns still needed) per draw."""
    seed, index, params = job
    bot = Hard(HardParams(**params))
    rules = Rules.from_dict(RULES)
    match = Match(rules, match_seed(seed, index))
    done: list[int | None] = [None, None]
    seen: list[list[tuple[float, float, int]]] = [[], []]
    while match.phase != "round_over" and None in done:
        seat = match.turn
        view = observe(match, seat)
        if done[seat] is not None:  # finished: keep its winning rack
            stock = view.phase == "draw"
            match.apply(Move.draw(seat, "stock") if stock else Move.throw(seat, False))
            continue
        if view.phase == "draw":
            board = Board.of(view)
            p = bot.params
            planner = Planner(
                board.rack, hard_pool(board, p), board.run, p.run_wait, 0.0, p.open_floor
            )
            with_run, plain = math.sqrt(planner.cost), math.sqrt(planner.f0[-1])
            seen[seat].append((with_run, plain, view.turns_taken[seat]))
        move = bot.choose(view, random.Random(f"{seed}/{index}/{view.moves}"))
        if move.act in ("place", "throw"):
            move = Move(move.seat, move.act, move.source, move.slot, False)
        match.apply(move)
        if is_winning(match.racks[seat], rules.run_needed, rules.descending):
            done[seat] = match.turns_taken[seat]
    rows = []
    for seat, finished in enumerate(done):
        if finished is not None:
            rows += [(c, p, finished - taken) for c, p, taken in seen[seat]]
    return rows


def least_squares(xs: Sequence[Sequence[float]], ys: Sequence[float]) -> list[float]:
    """The coefficients of ``y ≈ x·β`` (normal equations, Gaussian elimination)."""
    k = len(xs[0])
    a = [[sum(x[i] * x[j] for x in xs) for j in range(k)] for i in range(k)]
    b = [sum(x[i] * y for x, y in zip(xs, ys, strict=True)) for i in range(k)]
    for col in range(k):
        pivot = max(range(col, k), key=lambda r: abs(a[r][col]))
        a[col], a[pivot], b[col], b[pivot] = a[pivot], a[col], b[pivot], b[col]
        for r in range(k):
            if r != col:
                f = a[r][col] / a[col][col]
                a[r] = [u - f * v for u, v in zip(a[r], a[col], strict=True)]
                b[r] -= f * b[col]
    return [b[i] / a[i][i] for i in range(k)]


def r_squared(xs: Sequence[Sequence[float]], ys: Sequence[float], beta: Sequence[float]) -> float:
    mean = sum(ys) / len(ys)
    resid = sum(
        (y - sum(u * v for u, v in zip(x, beta, strict=True))) ** 2
        for x, y in zip(xs, ys, strict=True)
    )
    return 1 - resid / sum((y - mean) ** 2 for y in ys)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=1000)
    p.add_argument("--seed", default="value-fit")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--params", default="{}", help="HardParams of the players, as JSON")
    args = p.parse_args()
    params = json.loads(args.params)
    jobs = [(args.seed, i, params) for i in range(args.rounds)]
    with multiprocessing.Pool(args.jobs) as pool:
        rows = [row for rows in pool.map(play, jobs, chunksize=5) for row in rows]
    ys = [float(t) for _, _, t in rows]
    both = [(1.0, c, q) for c, q, _ in rows]
    alone = [(1.0, c) for c, _, _ in rows]
    a, b, c = least_squares(both, ys)
    a1, b1 = least_squares(alone, ys)
    print(f"{len(rows)} draw decisions from {args.rounds} rounds, players {json.dumps(params)}")
    print(f"turns ≈ {a:.3f} + {b:.4f}·√C + {c:.4f}·√P   R² {r_squared(both, ys, (a, b, c)):.4f}")
    print(f"turns ≈ {a1:.3f} + {b1:.4f}·√C              R² {r_squared(alone, ys, (a1, b1)):.4f}")
    print(f"fitted plain_weight c/b = {c / b:.3f}")
    # The calibration of the value the players play by: turns ≈ a + b·value.
    weight = HardParams(**params).plain_weight
    shipped = [(1.0, cc + weight * q) for _, cc, q in both]
    a, b = least_squares(shipped, ys)
    fit = r_squared(shipped, ys, (a, b))
    print(f"at plain_weight {weight}: turns ≈ {a:.3f} + {b:.4f}·value   R² {fit:.4f}")
    value = sorted((v, t) for (_, v), t in zip(shipped, ys, strict=True))
    print("value band        predicted  measured  decisions")
    step = max(1, len(value) // 10)
    for i in range(0, len(value) - step + 1, step):
        band = value[i : i + step]
        mid = sum(v for v, _ in band) / len(band)
        measured = sum(t for _, t in band) / len(band)
        low, high = band[0][0], band[-1][0]
        print(f"{low:6.1f}-{high:6.1f}   {a + b * mid:8.2f}  {measured:8.2f}  {len(band):9d}")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
