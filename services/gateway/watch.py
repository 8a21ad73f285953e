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
from typing import Any

from services._gen.rackem.v1 import matchmaker_pb2 as mm
from services.common.errors import ServiceError
from services.gateway.follow import SPECTATOR, Seat, follow
from services.gateway.protocol import ProtocolError, room_code
from services.gateway.session_api import SessionApi
from services.gateway.session_state import IDLE, Watching

__all__ = ["watch"]


async def watch(session: SessionApi, message: dict[str, Any]) -> None:
    """``watch``: follow the table with that code as a spectator."""
    session.make_free()
    code = room_code(message["code"])
    if session.admission.refuses_new():
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
    watching = Watching(lobby.table_id, lobby.code)
    session.enter(watching)
    watching.task = asyncio.create_task(_follow(session, watching, lobby))


async def _follow(session: SessionApi, watching: Watching, lobby: mm.Lobby) -> None:
    """The waiting room, then the table's spectator views, until the match is over. The
    ``watching`` message comes first: before the lobby, or once the table took the
    watcher (a table at its cap refuses it, and only the refusal is sent)."""
    seat = Seat(token="", seat=SPECTATOR, table_id=watching.table_id, code=watching.code)
    announcement = {"type": "watching", "table_id": watching.table_id, "code": watching.code}
    try:
        try:
            await follow(
                session.follower, seat, lobby, session.push, lambda: session.push(announcement)
            )
        except ServiceError as err:
            if err.code == "no_table":  # gone from the store since the code was looked up
                raise ProtocolError("no_code", "no table has that code") from None
            raise
    except Exception as exc:
        session.refuse_failure(exc)
    finally:
        if session.state is watching:
            session.enter(IDLE)
