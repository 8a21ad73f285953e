"""Computer players: ``choose(view, level, seed)`` returns a legal move for the seat of ``view``.

Bots decide from a ``View`` only — what that seat's player may see — never from a
``Match``. ``choose`` is a pure function of the view, the level and the seed: the
bot's own randomness comes from a ``random.Random`` derived from those, and
never from the match's streams. See docs/bots.md for how each level plays.
"""

from __future__ import annotations

import random
from typing import Protocol

from rackcore import Move, View
from rackcore.bots._assess import Assessment, assess
from rackcore.bots._hard import HARD_2025, Hard, HardParams
from rackcore.bots._medium import Easy, Medium

__all__ = [
    "LEVELS",
    "RETIRED",
    "Assessment",
    "Bot",
    "Easy",
    "Hard",
    "HardParams",
    "Medium",
    "assess",
    "bot_for",
    "choose",
]

LEVELS = ("easy", "medium", "hard")
# Earlier versions of a level, kept only to measure the new one against them
# (``rackem tournament --bots hard,hard-2025``). Never offered to players.
RETIRED = ("hard-2025",)


class Bot(Protocol):
    """A computer player of one level. ``rng`` is its only source of chance."""

    level: str

    def choose(self, view: View, rng: random.Random) -> Move: ...


_BOTS: dict[str, Bot] = {
    "easy": Easy(),
    "medium": Medium(),
    "hard": Hard(),
    "hard-2025": Hard(HARD_2025, level="hard-2025"),
}


def bot_for(level: str) -> Bot:
    """The bot of ``level`` (one of ``LEVELS``, or of ``RETIRED`` for measurements)."""
    try:
        return _BOTS[level]
    except KeyError:
        raise ValueError(f"unknown bot level {level!r}: use one of {', '.join(LEVELS)}") from None


def choose(view: View, level: str = "medium", seed: int = 0) -> Move:
    """The move ``level`` makes for the seat of ``view``; the same for the same arguments."""
    bot = bot_for(level)
    if not view.my_turn:
        raise ValueError(f"it is not seat {view.seat}'s turn")
    rng = random.Random(f"rackem-bot/{level}/{seed}/{view.seat}/{view.round_no}/{view.moves}")
    return bot.choose(view, rng)
