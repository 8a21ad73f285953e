"""The ways to resolve a drawn card, each with the rack value it leaves."""

from __future__ import annotations

import math
from dataclasses import dataclass

from rackcore import is_winning, longest_run
from rackcore.bots._value import Planner

__all__ = ["Option", "options", "swapped"]

SLOTS = 10
_TINY = 1e-9


@dataclass(frozen=True, slots=True)
class Option:
    """Put ``card`` in ``slot`` (``None``: throw it), leaving a rack worth ``turns``."""

    card: int
    slot: int | None
    out: int  # the card that goes onto the discard pile
    turns: float  # expected turns to go out afterwards (0: this goes out)
    run: int  # longest run of the rack afterwards

    @property
    def wins(self) -> bool:
        return self.run > 0


def options(
    planner: Planner, card: int, can_throw: bool, opens: list[float] | None = None
) -> list[Option]:
    """Every slot for ``card`` (and the throw when allowed), valued by ``planner``."""
    rack, run = planner.rack, planner.run
    result: list[Option] = []
    for s in range(SLOTS):
        cost = planner.place_cost(card, s, opens[s] if opens is not None else None)
        turns = math.sqrt(cost)
        longest = 0
        if cost == 0.0:
            after = (*rack[:s], card, *rack[s + 1 :])
            if is_winning(after, run):
                longest = longest_run(after)
            else:  # cannot happen: a plan costs nothing only when it keeps every card
                turns = _TINY
        result.append(Option(card, s, rack[s], turns, longest))
    if can_throw:
        turns = planner.value()
        longest = longest_run(rack) if turns == 0.0 and is_winning(rack, run) else 0
        result.append(Option(card, None, card, turns, longest))
    return result


def swapped(rack: tuple[int, ...], i: int) -> tuple[int, ...]:
    """The rack after a repair token swaps slots ``i`` and ``i + 1``."""
    r = list(rack)
    r[i], r[i + 1] = r[i + 1], r[i]
    return tuple(r)
