"""Protocol messages from the services' protobuf messages, and protobuf values from clients."""

from __future__ import annotations

from typing import Any

from orjson import Fragment

from rackcore import MalformedMoveError, Move, Rules, RulesError
from services._gen.rackem.v1 import game_pb2 as pb
from services._gen.rackem.v1 import matchmaker_pb2 as mm
from services.convert import rules_from_pb, rules_to_pb
from services.gateway.protocol import VERSION, ProtocolError

__all__ = [
    "lobby",
    "move_to_pb",
    "rules_to_request",
    "seated",
    "view",
    "welcome",
]


def welcome(server: str) -> dict[str, Any]:
    return {"type": "welcome", "version": VERSION, "server": server}


def seated(msg: mm.Seated) -> dict[str, Any]:
    return {
        "type": "seated",
        "token": msg.token,
        "seat": msg.seat,
        "code": msg.code,
        "table_id": msg.table_id,
    }


def lobby(msg: mm.Lobby, you: int) -> dict[str, Any]:
    return {
        "type": "lobby",
        "code": msg.code,
        "table_id": msg.table_id,
        "rules": rules_from_pb(msg.rules).to_dict(full=True),
        "seats": [
            {"seat": s.seat, "name": s.name, "taken": s.taken, "bot": s.bot} for s in msg.seats
        ],
        "creator_seat": msg.creator_seat,
        "you": you,
        "status": msg.status,
        "fill_deadline_ms": max(0, msg.fill_deadline_ms),
        "public": msg.public,
        "level": msg.level,
        "spectators": msg.spectators or "off",
    }


def _last_move(msg: pb.TableView) -> dict[str, Any] | None:
    if not msg.HasField("last_move") or not msg.last_move.act:
        return None
    move = msg.last_move
    out: dict[str, Any] = {"seat": move.seat, "act": move.act}
    if move.source:
        out["from"] = move.source
    if move.HasField("slot"):
        out["slot"] = move.slot
    if move.by:
        out["by"] = move.by
    return out


def view(msg: pb.TableView) -> dict[str, Any]:
    """The ``view`` message of one seat: its ``TableView`` field by field, with the seat's
    view and legal moves spliced in as the table made them (``view_json``, ``legal_json``)."""
    return {
        "type": "view",
        "table_id": msg.table_id,
        "code": msg.code,
        "version": msg.version,
        "status": msg.status,
        "seats": [
            {
                "seat": s.seat,
                "name": s.name,
                "kind": s.kind,
                "connected": s.connected,
                "level": s.level,
                "left": s.left,
            }
            for s in msg.seats[:]
        ],
        "deadline_ms": max(0, msg.deadline_ms),
        "remaining_ms": max(0, msg.remaining_ms),
        "continue_deadline_ms": max(0, msg.continue_deadline_ms),
        "continued": msg.continued[:],
        "last_move": _last_move(msg),
        "ended_reason": msg.ended_reason,
        "legal": Fragment(msg.legal_json),
        "view": Fragment(msg.view_json),
        "watchers": max(0, msg.watchers),
    }


def move_to_pb(fields: dict[str, Any]) -> pb.Move:
    """The move of a ``move`` message, checked as a move; the table adds the seat."""
    try:
        move = Move.from_dict({**fields, "seat": 0})
    except MalformedMoveError as exc:
        raise ProtocolError("malformed_move", str(exc)) from None
    out = pb.Move(act=move.act, source=move.source or "", stay_in=not move.go_out)
    if move.slot is not None:
        out.slot = move.slot
    return out


def rules_to_request(fields: dict[str, Any] | None) -> pb.Rules:
    """The rules of a ``create_table`` message, validated by rackcore (``bad_rules`` if not)."""
    try:
        rules = Rules.from_dict(fields or {})
    except RulesError as exc:
        raise ProtocolError("bad_rules", str(exc)) from None
    return rules_to_pb(rules)
