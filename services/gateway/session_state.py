"""What a connection is doing, as one value: idle, seated (waiting or playing), watching a
table, or after its match (a rematch may be asked for).

``Session.enter`` is the one place that changes it: it ends what the old state ran (the
task that followed a seat or a table, or forwarded rematch offers), lets go of the old
seat's token and claims the new one's. A state's task is never cancelled from inside
itself: a follow that ends and moves the session on is the task that ends.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from services.gateway.follow import Seat

__all__ = ["IDLE", "AfterMatch", "Idle", "Seated", "State", "Watching"]


def _cancel(task: asyncio.Task[None] | None) -> None:
    if task is not None and task is not asyncio.current_task():
        task.cancel()


@dataclass(frozen=True, slots=True)
class Idle:
    """No seat, no table watched, no finished match to rematch."""

    phase = "idle"

    def stop(self) -> None:
        pass


IDLE = Idle()


@dataclass(slots=True)
class Seated:
    """A seat held by its token, followed by ``task`` (its waiting room, then its views)."""

    seat: Seat
    task: asyncio.Task[None] | None = None

    @property
    def phase(self) -> str:
        return "playing" if self.seat.started else "waiting"

    def stop(self) -> None:
        _cancel(self.task)


@dataclass(slots=True)
class Watching:
    """A table followed as a spectator, by its room code, by ``task``."""

    table_id: str
    code: str
    task: asyncio.Task[None] | None = None

    phase = "watching"

    def stop(self) -> None:
        _cancel(self.task)


@dataclass(slots=True)
class AfterMatch:
    """The connection's last match finished: its seat (by the old token) for a rematch, and
    the task that forwards the rematch offer."""

    seat: Seat
    offers: asyncio.Task[None] | None = None

    phase = "after_match"

    def stop(self) -> None:
        _cancel(self.offers)


State = Idle | Seated | Watching | AfterMatch
