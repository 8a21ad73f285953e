"""Rematch: "play again" with the same people, at a new table with the same rules and seats.

When a seat's match finishes, the connection remembers it. ``rematch`` from it asks the
matchmaker for the seat at the match's rematch (``Rematch``): the first to ask opens it
(a new table id, room code and, at the table, seed and commitment); each player who asks
or accepts (the same message) gets ``seated`` with a new token, then that table's
``lobby`` and views, as for any table. Meanwhile the other players' connections are told
of the offer and of each answer (``rematch_offer``, from ``WatchRematch``) for at most
``REMATCH_OFFER_S`` after their match. The table starts once every human answered, or
after the matchmaker's ``REMATCH_MS`` with bots in the seats of those who did not.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import grpc

from services._gen.rackem.v1 import matchmaker_pb2 as mm
from services.common.errors import ServiceError
from services.gateway.follow import Seat
from services.gateway.protocol import ProtocolError

if TYPE_CHECKING:
    from services.gateway.session import Session

__all__ = ["Finished", "after_match", "forget", "offer_message", "rematch"]


@dataclass(slots=True)
class Finished:
    """The connection's last finished match: its seat (by the old token), and the task that
    forwards the rematch offer to it."""

    seat: Seat
    offers: asyncio.Task[None] | None = None

    def stop(self) -> None:
        if self.offers is not None and self.offers is not asyncio.current_task():
            self.offers.cancel()


def offer_message(lobby: mm.Lobby) -> dict[str, Any]:
    """``rematch_offer``: the rematch's table, who answered so far, and when it starts anyway."""
    return {
        "type": "rematch_offer",
        "table_id": lobby.table_id,
        "code": lobby.code,
        "status": lobby.status,
        "seats": [
            {"seat": s.seat, "name": s.name, "bot": s.bot, "answered": s.taken and not s.bot}
            for s in lobby.seats
        ],
        "deadline_ms": max(0, lobby.fill_deadline_ms),
    }


def after_match(session: Session, seat: Seat) -> None:
    """The seat's match finished: remember it, and forward any rematch offer."""
    forget(session)
    finished = Finished(seat)
    session.finished = finished
    finished.offers = asyncio.create_task(_forward_offers(session, seat))


def forget(session: Session) -> None:
    """The connection moved on (a new game, a rematch, watching, gone): no more offers."""
    if session.finished is not None:
        session.finished.stop()
        session.finished = None


async def _forward_offers(session: Session, seat: Seat) -> None:
    """``rematch_offer`` on the offer and every change, until it starts or closes. Quietly
    over when the matchmaker is unreachable: the player can still ask."""
    stream = session.backends.matchmaker.WatchRematch(mm.TokenRequest(token=seat.token))
    try:
        async with asyncio.timeout(session.settings.rematch_offer_s):
            async for lobby in stream:
                session.push(offer_message(lobby))
                if lobby.status != "waiting":
                    return
    except (TimeoutError, ServiceError, grpc.aio.AioRpcError):
        pass
    finally:
        with contextlib.suppress(Exception):
            stream.cancel()


async def rematch(session: Session, message: dict[str, Any]) -> None:
    """``rematch``: ask for (or accept) a rematch of this connection's finished match."""
    session._no_seat()
    finished = session.finished
    if finished is None:
        raise ProtocolError(
            "no_rematch", "a rematch is for the players of a finished match, once it is over"
        )
    session._new_game()
    request = mm.TokenRequest(token=finished.seat.token)
    timeout = session.settings.rpc_timeout_s
    reply = await session.backends.call_matchmaker(
        lambda stub: stub.Rematch(request, timeout=timeout)
    )
    session._bind(reply, reply.token)
