"""Hints: the move the hard bot would play for a seat, asked for by that seat's player.

A hint is for a player alone against the computer: the connection holds a seat whose
latest view (``Seat.view``, the ``view`` message the table wrote for it and the gateway
sent it) lists every *other* seat with ``kind: bot`` — a bot seat, or a human's seat left
for good; a ``human`` seat, or a ``cover`` (a bot playing for a human whose clock ran
out), means another person plays there, and hints are refused ``hint_unavailable``. So
are a connection that holds no seat or watches a table, and a seat at a rated table
(its lobby said ``rated``: ``Seat.rated``), whoever sits there. Then it must be the
seat's decision: that view is ``playing`` and lists legal moves, else ``not_your_turn``.

The bot service is asked ``ChooseMove`` with that seat's own view (its ``view`` field:
rackcore's ``View.to_dict()``, as the table sends the bot service a bot seat's view) at
level ``hard``: the hint is made from what the seat was shown, nothing more, and is sent
to that connection alone. The gateway decodes the view only here, for a hint.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

import orjson

from services._gen.rackem.v1 import bot_pb2
from services.common.errors import ServiceError
from services.gateway import messages
from services.gateway.protocol import ProtocolError, from_service
from services.gateway.session_api import SessionApi
from services.gateway.session_state import Seated

__all__ = ["HINT_LEVEL", "hint"]

log = logging.getLogger("rackem.gateway")

HINT_LEVEL = "hard"


async def hint(session: SessionApi, message: dict[str, Any]) -> None:
    """``hint``: the hard bot's move for this seat's decision, from its own latest view."""
    hint_id: str = message["id"]
    if "move" in message:  # the schema is both directions': only the answer has a move
        raise ProtocolError("bad_request", "move: unknown field", hint_id)
    view = _asked_view(session, message, hint_id)
    request = bot_pb2.ChooseMoveRequest(
        view_json=orjson.dumps(view["view"]).decode(),
        level=HINT_LEVEL,
        seed=secrets.randbits(63),  # the bot's own randomness, never the match's
    )
    timeout = session.settings.rpc_timeout_s
    try:
        reply = await session.backends.call_bot(
            lambda bots: bots.ChooseMove(request, timeout=timeout)
        )
    except ServiceError as err:
        if err.code not in ("unavailable", "busy"):  # the bot refused a table's view: a bug
            log.error("hint_refused", extra={"fields": {"code": err.code}})
            raise ProtocolError("internal", "internal error", hint_id) from None
        raise from_service(err.code, err.message, hint_id) from None
    move = messages.move_message(reply.move)
    if {k: v for k, v in move.items() if k != "go_out"} not in view["legal"]:
        log.error("hint_not_legal", extra={"fields": {"act": move["act"]}})
        raise ProtocolError("internal", "internal error", hint_id)
    session.push({"type": "hint", "id": hint_id, "version": view["version"], "move": move})


def _asked_view(session: SessionApi, message: dict[str, Any], hint_id: str) -> dict[str, Any]:
    """The seat's latest ``view`` message, if a hint may be made from it; else the refusal."""
    state = session.state
    if not isinstance(state, Seated):
        raise ProtocolError(
            "hint_unavailable", "hints are for a player's own seat at a table", hint_id
        )
    seat = state.seat
    if seat.rated:
        raise ProtocolError("hint_unavailable", "hints are not given at a rated table", hint_id)
    if not seat.view:
        raise ProtocolError("not_your_turn", "the table has not started", hint_id)
    view: dict[str, Any] = orjson.loads(seat.view)
    if any(s["kind"] != "bot" for s in view["seats"] if s["seat"] != seat.seat):
        raise ProtocolError(
            "hint_unavailable",
            "hints are only for a table where every other seat is the computer",
            hint_id,
        )
    if view["status"] != "playing" or not view["legal"]:
        raise ProtocolError("not_your_turn", "it is not your decision now", hint_id)
    if "version" in message and message["version"] != view["version"]:
        raise ProtocolError(
            "stale_version", f"the table's latest view is version {view['version']}", hint_id
        )
    return view
