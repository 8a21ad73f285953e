"""How far a rack is from going out, in expected turns: the heart of the medium and hard bots.

The model. A plan keeps some cards (*keepers*, increasing left to right) and must
replace every other card. Between two keepers with values ``a < b`` and ``k`` open
slots, the open slots share the pool weight ``m`` lying strictly between ``a`` and
``b``: each slot is filled by a draw with chance ``m / (k * total)``, so it waits
about ``t = k * total / m`` turns. The slots fill in parallel, and the expected time
until the last one is filled is close to the root of the sum of squared waits
(within a few percent for equal slots), so a plan costs ``sum(t * t)`` and the
rack's value is the square root of the cheapest plan's cost.

With ``run > 1`` the plan must also hold a run: ``run`` adjacent slots holding
consecutive values ``x .. x+run-1`` (a *block*). Each missing block card waits
``total / w`` turns for its own weight ``w``. Blocks are tried where at least one
card is already in place; a plan may also pay for a whole new run.

Two dials were fitted to the hard player's own play (``bench/hard_value_fit.py``):

- ``plain_weight`` adds ``w·√P`` to the value, where ``P`` is the cheapest plan's
  cost *without* the run. The run's specific cards dominate ``√C``, yet how far the
  rack is from increasing predicts the turns still needed nearly as strongly: fitted
  to self-play, turns ≈ a + b·√C + c·√P with c between 0.6·b and b.
- ``open_floor`` adds a constant to every open slot's squared wait: each slot still
  to fill takes a draw, however many cards would fit it.

``cost`` and ``place_cost`` return the combined cost (its root is the value), and
``open_cost`` the cost with the run alone, as ``place_cost`` takes it.

``Planner`` computes, once per rack, the cheapest plan from the left edge to each
keeper and from each keeper to the right edge, without and with the run (``f0, f1,
b0, b1``). Then "this rack with card ``v`` in slot ``s``" costs O(slots) instead of
a new search, which is what lets the hard bot weigh every card it might draw.

A value of 0 in a rack means "unknown card" (an opponent's hidden slot): it can
never be a keeper.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rackcore.bots._pool import Pool

__all__ = ["INF", "Planner"]

INF = float("inf")
SLOTS = 10
_END = SLOTS + 1  # position of the right edge; position p holds slot p - 1


class Planner:
    """The plans of one rack against one pool. ``cost`` is the cheapest (0 = winning rack)."""

    __slots__ = (
        "_lefts",
        "_open_plain",
        "_rights",
        "b0",
        "b1",
        "blocks",
        "cost",
        "f0",
        "f1",
        "open_floor",
        "plain_weight",
        "pool",
        "rack",
        "run",
        "run_wait",
        "vals",
    )

    def __init__(
        self,
        rack: Sequence[int],
        pool: Pool,
        run: int = 0,
        run_wait: float = 1.0,
        plain_weight: float = 0.0,
        open_floor: float = 0.0,
    ) -> None:
        self.rack = tuple(rack)
        self.pool = pool
        self.run = run if run > 1 else 0
        self.run_wait = run_wait
        self.vals = [0, *rack, pool.n + 1]
        self._lefts: dict[tuple[int, int], float] = {}
        self._rights: dict[tuple[int, int], float] = {}
        self._open_plain = [INF] * SLOTS
        # Both dials were fitted with the run rule; without it the value is as before.
        self.plain_weight = plain_weight if self.run else 0.0
        self.open_floor = open_floor if self.run else 0.0
        self.f0 = self._forward()
        self.b0 = self._backward()
        # Blocks: (start slot, first value, cost of the missing cards, left, right).
        self.blocks: list[tuple[int, int, float, float, float]] = []
        if self.run:
            self._find_blocks()
            self.f1 = self._forward_with_run()
            self.b1 = self._backward_with_run()
            cost = min(self.f1[_END], self._fresh_run(self.f0[_END]))
            self.cost = self._combine(cost, self.f0[_END])
        else:
            self.f1 = self.b1 = self.f0
            self.cost = self.f0[_END]

    # -- queries -------------------------------------------------------------

    def value(self) -> float:
        """Expected turns to go out, roughly; ``INF`` when no plan can finish."""
        return math.sqrt(self.cost)

    def open_cost(self, s: int) -> float:
        """Cheapest plan that does not use the card in slot ``s`` (it will be replaced).

        The cost with the run; ``place_cost`` takes it, and the plain part it keeps.
        """
        pos, vals, f0, b0 = s + 1, self.vals, self.f0, self.b0
        plain = INF
        layered = INF
        for q in range(pos):
            vq = vals[q]
            for p in range(pos + 1, _END + 1):
                vp = vals[p]
                if vp <= vq:
                    continue
                g = self._gap(p - q - 1, vq, vp)
                if g == INF:
                    continue
                plain = min(plain, f0[q] + g + b0[p])
                if self.run:
                    layered = min(layered, f0[q] + g + self.b1[p], self.f1[q] + g + b0[p])
        if not self.run:
            return plain
        self._open_plain[s] = plain
        best = min(layered, self._fresh_run(plain))
        run = self.run
        for t, x, miss, left, right in self.blocks:
            if t > s:  # an open stretch through slot s ends at this block
                for q in range(pos):
                    if vals[q] < x and f0[q] + miss + right < best:
                        best = min(best, f0[q] + self._gap(t - q, vals[q], x) + miss + right)
            elif t + run - 1 < s:  # an open stretch through slot s starts after this block
                end, hi = t + run, x + run - 1
                for p in range(pos + 1, _END + 1):
                    if vals[p] > hi and left + miss + b0[p] < best:
                        best = min(best, left + miss + self._gap(p - end - 1, hi, vals[p]) + b0[p])
            elif self.rack[s] != x + s - t:  # the block itself needs another card in slot s
                best = min(best, left + miss + right)
        return best

    def place_cost(self, v: int, s: int, open_cost: float | None = None) -> float:
        """Cost of this rack with card ``v`` in slot ``s`` (``open_cost(s)`` may be passed in)."""
        best = self.open_cost(s) if open_cost is None else open_cost
        pos, vals, run = s + 1, self.vals, self.run
        pool = self.pool
        cum, avail, total = pool.cum, pool.avail, pool.total
        floor = self.open_floor
        f0, f1, b0, b1 = self.f0, self.f1, self.b0, self.b1
        left0 = left1 = right0 = right1 = INF
        cv, av = cum[v - 1], avail[v - 1]
        for q in range(pos):
            vq = vals[q]
            if vq >= v:
                continue
            k = pos - q - 1
            g = 0.0
            if k:
                if av - avail[vq] < k:
                    continue
                t = k * total / (cv - cum[vq])
                g = k * (t * t + floor)
            x = f0[q] + g
            if x < left0:
                left0 = x
            x = f1[q] + g
            if x < left1:
                left1 = x
        cv, av = cum[v], avail[v]
        for p in range(pos + 1, _END + 1):
            vp = vals[p]
            if vp <= v:
                continue
            k = p - pos - 1
            g = 0.0
            if k:
                if avail[vp - 1] - av < k:
                    continue
                t = k * total / (cum[vp - 1] - cv)
                g = k * (t * t + floor)
            x = g + b0[p]
            if x < right0:
                right0 = x
            x = g + b1[p]
            if x < right1:
                right1 = x
        plain = left0 + right0
        if not run:
            return plain if plain < best else best
        for t0, x0, miss, left, right in self.blocks:
            if t0 + run - 1 < s:  # the run ends left of slot s
                hi = x0 + run - 1
                if hi >= v or left + miss >= left1:
                    continue
                k = s - t0 - run
                g = 0.0
                if k:
                    if avail[v - 1] - avail[hi] < k:
                        continue
                    t = k * total / (cum[v - 1] - cum[hi])
                    g = k * (t * t + floor)
                if left + miss + g < left1:
                    left1 = left + miss + g
            elif t0 > s:  # the run starts right of slot s
                if x0 <= v or miss + right >= right1:
                    continue
                k = t0 - s - 1
                g = 0.0
                if k:
                    if avail[x0 - 1] - avail[v] < k:
                        continue
                    t = k * total / (cum[x0 - 1] - cum[v])
                    g = k * (t * t + floor)
                if g + miss + right < right1:
                    right1 = g + miss + right
        best = min(best, left0 + right1, left1 + right0, self._fresh_run(plain))
        best = self._blocks_through(v, s, best)
        if self.plain_weight:
            open_plain = self._open_plain[s]
            return self._combine(best, plain if plain < open_plain else open_plain)
        return best

    # -- internals -----------------------------------------------------------

    def _combine(self, cost: float, plain: float) -> float:
        """The cost whose root is ``√cost + plain_weight · √plain`` (``cost`` with the run)."""
        if not self.plain_weight or cost == INF:
            return cost
        root = math.sqrt(cost) + self.plain_weight * math.sqrt(plain)
        return root * root

    def _gap(self, k: int, low: int, high: int) -> float:
        """Cost of ``k`` open slots between keepers ``low < high``."""
        if k == 0:
            return 0.0
        pool, floor = self.pool, self.open_floor
        if high - low - 1 < k or pool.avail[high - 1] - pool.avail[low] < k:
            return INF
        t = k * pool.total / (pool.cum[high - 1] - pool.cum[low])
        return k * (t * t + floor)

    def _fresh_run(self, plain: float) -> float:
        """A plan with no run card in place yet: every run card is still to be drawn."""
        total = self.pool.total * self.run_wait
        return plain + self.run * total * total

    def _forward(self) -> list[float]:
        vals, pool, floor = self.vals, self.pool, self.open_floor
        cum, avail, total = pool.cum, pool.avail, pool.total
        f = [INF] * (_END + 1)
        f[0] = 0.0
        for p in range(1, _END + 1):
            vp = vals[p]
            best = INF
            for q in range(p):
                fq = f[q]
                vq = vals[q]
                if fq >= best or vq >= vp:
                    continue
                k = p - q - 1
                if k:
                    if avail[vp - 1] - avail[vq] < k:
                        continue
                    t = k * total / (cum[vp - 1] - cum[vq])
                    fq += k * (t * t + floor)
                if fq < best:
                    best = fq
            f[p] = best
        return f

    def _backward(self) -> list[float]:
        vals, pool, floor = self.vals, self.pool, self.open_floor
        cum, avail, total = pool.cum, pool.avail, pool.total
        b = [INF] * (_END + 1)
        b[_END] = 0.0
        for q in range(_END - 1, -1, -1):
            vq = vals[q]
            best = INF
            for p in range(q + 1, _END + 1):
                bp = b[p]
                vp = vals[p]
                if bp >= best or vp <= vq:
                    continue
                k = p - q - 1
                if k:
                    if avail[vp - 1] - avail[vq] < k:
                        continue
                    t = k * total / (cum[vp - 1] - cum[vq])
                    bp += k * (t * t + floor)
                if bp < best:
                    best = bp
            b[q] = best
        return b

    def _miss(self, t: int, x: int, s: int = -1, v: int = 0) -> float:
        """Cost of the block's missing cards (with card ``v`` in slot ``s`` if given)."""
        weight, total = self.pool.weight, self.pool.total * self.run_wait
        miss = 0.0
        for i in range(self.run):
            card = v if t + i == s else self.rack[t + i]
            if card != x + i:
                w = weight[x + i]
                if w <= 0:
                    return INF
                wait = total / w
                miss += wait * wait
        return miss

    def _block_left(self, t: int, x: int) -> float:
        """Cheapest plain plan from the left edge up to a block starting at slot ``t``."""
        best, vals, f0 = INF, self.vals, self.f0
        for q in range(t + 1):
            if f0[q] < best and vals[q] < x:
                best = min(best, f0[q] + self._gap(t - q, vals[q], x))
        return best

    def _block_right(self, t: int, x: int) -> float:
        """Cheapest plain plan from the end of a block starting at slot ``t`` to the right edge."""
        best, vals, b0 = INF, self.vals, self.b0
        hi, end = x + self.run - 1, t + self.run
        for p in range(end + 1, _END + 1):
            if b0[p] < best and vals[p] > hi:
                best = min(best, b0[p] + self._gap(p - end - 1, hi, vals[p]))
        return best

    def _plausible(self, t: int, x: int) -> bool:
        n, run = self.pool.n, self.run
        return 0 <= t <= SLOTS - run and x >= t + 1 and x + run - 1 <= n - (SLOTS - t - run)

    def _find_blocks(self) -> None:
        seen: set[tuple[int, int]] = set()
        for s, c in enumerate(self.rack):
            if c <= 0:
                continue
            for i in range(self.run):
                t, x = s - i, c - i
                if (t, x) in seen or not self._plausible(t, x):
                    continue
                seen.add((t, x))
                miss = self._miss(t, x)
                if miss == INF:
                    continue
                left = self._block_left(t, x)
                right = self._block_right(t, x) if left < INF else INF
                if right < INF:
                    self.blocks.append((t, x, miss, left, right))

    def _forward_with_run(self) -> list[float]:
        vals = self.vals
        f1 = [INF] * (_END + 1)
        for p in range(1, _END + 1):
            vp = vals[p]
            best = INF
            for q in range(1, p):
                if f1[q] < best and vals[q] < vp:
                    best = min(best, f1[q] + self._gap(p - q - 1, vals[q], vp))
            for t, x, miss, left, _ in self.blocks:
                end = t + self.run  # position of the block's last slot
                hi = x + self.run - 1
                if end < p and hi < vp:
                    best = min(best, left + miss + self._gap(p - end - 1, hi, vp))
            f1[p] = best
        return f1

    def _backward_with_run(self) -> list[float]:
        vals = self.vals
        b1 = [INF] * (_END + 1)
        for q in range(_END - 1, -1, -1):
            vq = vals[q]
            best = INF
            for p in range(q + 1, _END):
                if b1[p] < best and vals[p] > vq:
                    best = min(best, b1[p] + self._gap(p - q - 1, vq, vals[p]))
            for t, x, miss, _, right in self.blocks:
                start = t + 1  # position of the block's first slot
                if start > q and x > vq:
                    best = min(best, self._gap(start - q - 1, vq, x) + miss + right)
            b1[q] = best
        return b1

    def _blocks_through(self, v: int, s: int, bound: float) -> float:
        """Cheapest plan whose run uses card ``v`` placed in slot ``s``."""
        best, run, n = bound, self.run, self.pool.n
        for i in range(run):
            t, x = s - i, v - i
            if t < 0 or t > SLOTS - run or x < t + 1 or x + run - 1 > n - (SLOTS - t - run):
                continue
            miss = self._miss(t, x, s, v)
            if miss >= best:
                continue
            key = (t, x)
            left = self._lefts.get(key)
            if left is None:
                left = self._lefts[key] = self._block_left(t, x)
            if left + miss >= best:
                continue
            right = self._rights.get(key)
            if right is None:
                right = self._rights[key] = self._block_right(t, x)
            if left + miss + right < best:
                best = left + miss + right
        return best
