"""When a table must act by itself, and how: a pure function of the table's facts and the time.

The table's driver task asks ``next_step`` after every change and sleeps until the
step is due (or the table changes again):

- ``abandon``: no human has been connected for ``abandon_ms``;
- ``deal``: the round is over and every connected human pressed continue, or the
  round-over screen's deadline passed;
- ``cover``: the human to move let the decision clock run out;
- ``bot``: a bot (or a cover) is to move: ``bot_delay_ms`` after the last change
  while any seat is a human's (connected or not), at once at a table of bots only;
- the reconnect grace: a human seat that is covered and has no stream is waited for
  ``grace_ms`` after its stream went: its cover does not play before then, and with
  no human connected at all neither does any bot, nor is the next round dealt
  before then (at most at the round-over deadline). A dropped connection never
  costs the match in seconds; after the grace the covers play at the bots' pace;
- ``wait``: nothing is due until something changes; ``done``: the table is over.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

__all__ = ["Facts", "Step", "Timing", "next_step", "now_ms"]

Action = Literal["done", "abandon", "deal", "cover", "bot", "wait"]


def now_ms() -> int:
    """Unix time in milliseconds: deadlines are stored as absolute times."""
    return int(time.time() * 1000)


@dataclass(frozen=True, slots=True)
class Timing:
    bot_delay_ms: int
    abandon_ms: int
    grace_ms: int = 60_000  # the reconnect grace


@dataclass(frozen=True, slots=True)
class Facts:
    status: str  # playing | round_over | finished | ended
    turn: int
    kinds: tuple[str, ...]  # per seat: human | bot | cover
    connected: tuple[bool, ...]
    continued: tuple[bool, ...]
    deadline_ms: int  # 0 = none
    continue_deadline_ms: int
    last_change_ms: int
    alone_since_ms: int | None  # since when no human is connected; None while one is
    # per seat: since when it has had no stream (None while it has one); () = unknown
    away_since_ms: tuple[int | None, ...] = ()

    @property
    def humans_connected(self) -> list[int]:
        return [s for s, kind in enumerate(self.kinds) if kind != "bot" and self.connected[s]]

    @property
    def has_human(self) -> bool:
        """A seat is still a human's (playing, or covered): bots keep a person's pace."""
        return any(kind != "bot" for kind in self.kinds)

    def grace_end(self, seat: int, grace_ms: int) -> int:
        """Until when the table waits for ``seat`` to come back (0: it does not wait)."""
        if self.kinds[seat] == "bot" or self.connected[seat] or seat >= len(self.away_since_ms):
            return 0
        since = self.away_since_ms[seat]
        return 0 if since is None else since + grace_ms

    def graces_end(self, grace_ms: int) -> int:
        """Until when a table with no human connected waits for its humans to come back."""
        if self.humans_connected:
            return 0
        return max((self.grace_end(s, grace_ms) for s in range(len(self.kinds))), default=0)


@dataclass(frozen=True, slots=True)
class Step:
    action: Action
    at_ms: int = 0  # when it is due (unix ms); 0 for done and wait
    seat: int = -1  # the seat it concerns (cover, bot)


def _main_step(facts: Facts, timing: Timing) -> Step:
    if facts.status == "round_over":
        if all(facts.continued[s] for s in facts.humans_connected):
            grace = min(facts.graces_end(timing.grace_ms), facts.continue_deadline_ms)
            return Step("deal", max(facts.last_change_ms, grace))
        return Step("deal", facts.continue_deadline_ms)
    kind = facts.kinds[facts.turn]
    if kind in ("bot", "cover"):
        delay = timing.bot_delay_ms if facts.has_human else 0
        at = facts.last_change_ms + delay
        if kind == "cover":
            at = max(at, facts.grace_end(facts.turn, timing.grace_ms))
        return Step("bot", max(at, facts.graces_end(timing.grace_ms)), facts.turn)
    if facts.deadline_ms:
        return Step("cover", facts.deadline_ms, facts.turn)
    return Step("wait")


def next_step(facts: Facts, timing: Timing) -> Step:
    """The next thing the table does by itself, and when."""
    if facts.status in ("finished", "ended"):
        return Step("done")
    step = _main_step(facts, timing)
    if facts.alone_since_ms is not None:
        abandon_at = facts.alone_since_ms + timing.abandon_ms
        if step.action == "wait" or abandon_at < step.at_ms:
            return Step("abandon", abandon_at)
    return step
