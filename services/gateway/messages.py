"""Protocol messages from the services' protobuf messages, and protobuf values from clients.

Both ways the mapping is mechanical, field by field: the gateway decides nothing about the
game. A client's move and rules become their protobuf messages by name and JSON type, and
the service that owns them says whether they are a move (the table: ``malformed_move``) or
rules (the matchmaker: ``bad_rules``). A seat's ``view`` message is not made here: the
table writes it, whole, once per seat per change (``TableView.message``), and the gateway
sends it as it is.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.descriptor import FieldDescriptor

from services._gen.rackem.v1 import game_pb2 as pb
from services._gen.rackem.v1 import matchmaker_pb2 as mm
from services.gateway.protocol import VERSION, ProtocolError

__all__ = [
    "lobby",
    "move_message",
    "move_to_pb",
    "rules_dict",
    "rules_to_request",
    "seated",
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
        "rules": rules_dict(msg.rules),
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
        "rated": msg.rated,
        "daily": msg.daily,
    }


def move_to_pb(fields: dict[str, Any]) -> pb.Move:
    """The move of a ``move`` message (its schema checked the JSON types), without a seat: the
    table adds the seat and decides whether it is a move."""
    out = pb.Move(act=fields["act"], source=fields.get("from", ""))
    if "slot" in fields:
        out.slot = fields["slot"]
    if "go_out" in fields:
        out.go_out = fields["go_out"]
    return out


def move_message(msg: pb.Move) -> dict[str, Any]:
    """A move as a client sends it in a ``move`` message (``move_to_pb``'s inverse): no seat,
    ``from`` for a draw, ``slot`` when set, ``go_out`` only as ``false`` (absent means true)."""
    out: dict[str, Any] = {"act": msg.act}
    if msg.source:
        out["from"] = msg.source
    if msg.HasField("slot"):
        out["slot"] = msg.slot
    if msg.HasField("go_out") and not msg.go_out:
        out["go_out"] = False
    return out


_PYTHON: dict[int, type] = {
    FieldDescriptor.TYPE_INT32: int,
    FieldDescriptor.TYPE_BOOL: bool,
    FieldDescriptor.TYPE_STRING: str,
}
_RULES: dict[str, type] = {f.name: _PYTHON[f.type] for f in pb.Rules.DESCRIPTOR.fields}
_WORDS = {int: "an integer", bool: "true or false", str: "a string"}


def rules_to_request(fields: dict[str, Any] | None) -> pb.Rules:
    """The ``Rules`` message of a ``create_table``'s rules, option by option (absent or
    ``null``: unset, the rules' default). An option no ``Rules`` has, or a value of another
    JSON type than its field's, is ``bad_rules`` here; whether the values make rules (their
    ranges, how they combine) is the matchmaker's to say, with the same code."""
    out = pb.Rules()
    for name, value in (fields or {}).items():
        kind = _RULES.get(name)
        if kind is None:
            raise ProtocolError("bad_rules", f"unknown rules option: {name}")
        if value is None:
            continue
        if type(value) is not kind:  # (a JSON true is no integer here, nor 1 a boolean)
            raise ProtocolError("bad_rules", f"{name} must be {_WORDS[kind]}")
        setattr(out, name, value)
    return out


def rules_dict(msg: pb.Rules) -> dict[str, Any]:
    """A ``Rules`` message as the protocol's rules object: every option, in field order (the
    matchmaker fills every field of the rules it sends)."""
    present = {field.name: value for field, value in msg.ListFields()}
    return {name: present.get(name) for name in _RULES}
