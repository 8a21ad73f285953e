"""Spectators: a connection without a seat follows a table open to them, by its room code.

``watch`` looks the code up (``GetLobby``). A table whose creator opened it to spectators
(``create_table`` with ``spectators: public``) is followed as seat ``SPECTATOR``: its
waiting room by code until it starts, then its views as the table service makes them
for a spectator (``observe(state, SPECTATOR)``: public information only, no legal
moves), to the end of the match. The table counts its watchers and refuses them past
its cap (``spectators_full``); a watcher is never a seat, so it keeps no clock waiting
and no table alive. A watching connection holds no seat: seat and table messages are
refused ``watching``, and ``leave`` stops watching.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from services._gen.rackem.v1 import matchmaker_pb2 as mm
from services.common.errors import ServiceError
from services.gateway.follow import SPECTATOR, Seat, follow
from services.gateway.protocol import ProtocolError, from_service
from services.gateway.rematch import forget

if TYPE_CHECKING:
    from services.gateway.session import Session

__all__ = ["Spectator", "refuse_while_watching", "watch"]

log = logging.getLogger("rackem.gateway")


@dataclass(slots=True)
class Spectator:
    """The table a connection watches, and the task that follows it."""

    table_id: str
    code: str
    task: asyncio.Task[None] | None = None

    def stop(self) -> None:
        if self.task is not None and self.task is not asyncio.current_task():
            self.task.cancel()


def refuse_while_watching(session: Session) -> None:
    """A seat or table message from a watching connection: refused, with how to stop."""
    if session.watching is not None:
        raise ProtocolError(
            "watching", "this connection is watching a table and holds no seat; leave first"
        )


async def watch(session: Session, message: dict[str, Any]) -> None:
    """``watch``: follow the table with that code as a spectator."""
    refuse_while_watching(session)
    if session.seat is not None:
        raise ProtocolError("already_seated", "this connection holds a seat; leave first")
    code = message["code"].strip().upper()
    if len(code) != 6 or not code.isalnum():
        raise ProtocolError("no_code", "no table has that code")
    if session.admission.overloaded:
        raise ProtocolError("busy", "the server is busy; try again in a moment")
    request = mm.LobbyRequest(code=code)
    timeout = session.settings.rpc_timeout_s
    lobby = await session.backends.call_matchmaker(
        lambda stub: stub.GetLobby(request, timeout=timeout)
    )
    if lobby.status == "closed":
        raise ProtocolError("no_code", "no table has that code")
    if lobby.spectators != "public":
        raise ProtocolError("no_spectators", "this table is not open to spectators")
    spectator = Spectator(lobby.table_id, lobby.code)
    forget(session)
    session.watching = spectator
    spectator.task = asyncio.create_task(_follow(session, spectator, lobby))


async def _follow(session: Session, spectator: Spectator, lobby: mm.Lobby) -> None:
    """The waiting room, then the table's spectator views, until the match is over. The
    ``watching`` message comes first: before the lobby, or once the table took the
    watcher (a table at its cap refuses it, and only the refusal is sent)."""
    seat = Seat(token="", seat=SPECTATOR, table_id=spectator.table_id, code=spectator.code)
    announcement = {"type": "watching", "table_id": spectator.table_id, "code": spectator.code}
    try:
        await follow(
            session.follower, seat, lobby, session.push, lambda: session.push(announcement)
        )
    except ServiceError as err:
        if err.code == "no_table":  # gone from the store since the code was looked up
            session._refuse(ProtocolError("no_code", "no table has that code"))
        else:
            session._refuse(from_service(err.code, err.message))
    except Exception:
        log.exception("unexpected_error")
        session._refuse(ProtocolError("internal", "internal error"))
    finally:
        if session.watching is spectator:
            session.watching = None
