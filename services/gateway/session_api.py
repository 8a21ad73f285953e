"""What a command module (watch.py, rematch.py) may ask of the session it runs on: its
state and the one way to change it, the services and settings a command calls with, and
the checks every new game or table passes. ``Session`` (session.py) is the one
implementation; the commands import this, never session.py, so there is no import circle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from services._gen.rackem.v1 import matchmaker_pb2 as mm
from services.archive.profiles import Profile
from services.gateway.admission import Admission
from services.gateway.backends import Backends
from services.gateway.follow import Follower, Push
from services.gateway.session_state import State
from services.gateway.settings import GatewaySettings

if TYPE_CHECKING:
    from services.gateway.profiles import Profiles

__all__ = ["SessionApi"]


class SessionApi(Protocol):
    # The profile bound to this connection (profiles.py), or None; its rating is re-read
    # from the store before each new game.
    profile: Profile | None

    @property
    def settings(self) -> GatewaySettings: ...
    @property
    def backends(self) -> Backends: ...
    @property
    def follower(self) -> Follower: ...
    @property
    def admission(self) -> Admission: ...
    @property
    def push(self) -> Push: ...
    @property
    def state(self) -> State: ...
    @property
    def profiles(self) -> Profiles | None:
        """The gateway's profile store (profiles.py); None without ``DATABASE_URL``."""

    def enter(self, state: State) -> None:
        """Move to ``state``, ending what the old one ran (session_state.py)."""

    def make_free(self) -> None:
        """Ready the connection for a new seat or table: a seat whose match is over is let
        go (after the match, if it finished); a seat still held, or a table watched, is
        refused (``already_seated``, ``watching``)."""

    def may_start_game(self) -> None:
        """Refuse a new game while the gateway is overloaded (``busy``) or the address has
        started too many (``rate_limited``)."""

    def take_seat(
        self, reply: mm.Seated, token: str, kind: str | None = None, since: float = 0.0
    ) -> None:
        """Hold the seat ``reply`` names, by ``token``, and follow it; with ``kind`` (a
        ``JOIN_KINDS``), the time from ``since`` (``perf_counter``: the message's arrival)
        to the ``seated`` sent is observed."""

    def refuse_failure(self, exc: BaseException) -> None:
        """Send the client the refusal for a failure of a command's own task."""
