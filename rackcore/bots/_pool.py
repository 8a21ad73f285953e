"""The cards a seat may still hope to draw, as weights per card value, with prefix sums."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["Pool"]


class Pool:
    """How likely each card value ``1..n`` is to reach this seat, relative to the others.

    ``weight[v]`` is 1 for a card that may come from the stock, less for a card that
    only comes back after a recycle, 0 for a card nobody can draw (in the seat's own
    rack, or seen in another rack). Prefix sums make "how much weight lies strictly
    between two values" an O(1) question, which the rack value asks hundreds of times.
    """

    __slots__ = ("avail", "cum", "n", "total", "weight")

    def __init__(self, n: int, weight: Sequence[float]) -> None:
        if len(weight) != n + 2:
            raise ValueError("weight is indexed 0..n+1")
        self.n = n
        self.weight = tuple(weight)
        cum = [0.0] * (n + 2)
        avail = [0] * (n + 2)
        c, a = 0.0, 0
        for v in range(1, n + 1):
            w = weight[v]
            c += w
            a += w > 0
            cum[v] = c
            avail[v] = a
        cum[n + 1], avail[n + 1] = c, a
        self.cum = cum
        self.avail = avail
        self.total = c if c > 0 else 1e-9

    @classmethod
    def uniform(cls, n: int, excluded: Sequence[int]) -> Pool:
        """Every value weighs 1 except ``excluded`` (the seat's own cards)."""
        weight = [0.0] + [1.0] * n + [0.0]
        for v in excluded:
            weight[v] = 0.0
        return cls(n, weight)
