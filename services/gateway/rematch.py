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
import time
from typing import Any

import grpc

from services._gen.rackem.v1 import matchmaker_pb2 as mm
from services.common.errors import ServiceError
from services.gateway.follow import Push
from services.gateway.matchmaker_client import MatchmakerClient
from services.gateway.protocol import ProtocolError
from services.gateway.session_api import SessionApi
from services.gateway.session_state import AfterMatch

__all__ = ["forward_offers", "offer_message", "rematch"]


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


async def forward_offers(
    matchmaker: MatchmakerClient, token: str, for_s: float, push: Push
) -> None:
    """``rematch_offer`` on the offer and every change, for at most ``for_s`` or until it
    starts or closes. Quietly over when the matchmaker is unreachable: the player can still
    ask."""
    stream = matchmaker.WatchRematch(mm.TokenRequest(token=token))
    try:
        async with asyncio.timeout(for_s):
            async for lobby in stream:
                push(offer_message(lobby))
                if lobby.status != "waiting":
                    return
    except (TimeoutError, ServiceError, grpc.aio.AioRpcError):
        pass
    finally:
        with contextlib.suppress(Exception):
            stream.cancel()


async def rematch(session: SessionApi, message: dict[str, Any]) -> None:
    """``rematch``: ask for (or accept) a rematch of this connection's finished match."""
    since = time.perf_counter()
    session.make_free()
    finished = session.state
    if not isinstance(finished, AfterMatch):
        raise ProtocolError(
            "no_rematch", "a rematch is for the players of a finished match, once it is over"
        )
    session.may_start_game()
    request = mm.TokenRequest(token=finished.seat.token)
    timeout = session.settings.rpc_timeout_s
    reply = await session.backends.call_matchmaker(
        lambda stub: stub.Rematch(request, timeout=timeout)
    )
    session.take_seat(reply, reply.token, "rematch", since)
