"""Quick match by level: which open table a newcomer with a rating may join.

A table's level is the mean rating of its humans that brought one. A newcomer with a
rating joins the oldest open table of its player count whose level is within the
table's window of its own: ``level_window`` wide at the table's opening, widening by
``level_widen_per_s`` each second the table has waited (since its first player sat),
and unlimited once it has waited ``level_open_ms`` (half the lone fill deadline, by
default). A newcomer without a profile (so without a rating), or a table without a
profiled human, matches any.
With no table in its window, the newcomer opens a table of its own. The fill deadlines
are unchanged: no table starts later for this (docs/matchmaker.md, *Matched by level*;
``QUICK_JOIN`` in store/lua.py does the same in Redis).
"""

from __future__ import annotations

from math import inf

from services.matchmaker.records import Timings

__all__ = ["fits", "window"]


def window(age_ms: int, timings: Timings) -> float:
    """How far from its level a table of that age takes a newcomer."""
    if timings.level_open_ms <= 0 or age_ms >= timings.level_open_ms:
        return inf
    return timings.level_window + timings.level_widen_per_s * max(age_ms, 0) / 1000


def fits(level: float | None, rating: int | None, age_ms: int, timings: Timings) -> bool:
    """Whether a newcomer of ``rating`` (None: no profile) may join a table of ``level``
    (None: no profiled human) that has waited ``age_ms``."""
    if rating is None or level is None:
        return True
    return abs(rating - level) <= window(age_ms, timings)
