"""rackcore values ⇄ protobuf messages, in one place: rules and moves (a view travels as
its ``View.to_dict()`` JSON, services/table/views.py)."""

from __future__ import annotations

from dataclasses import fields

from rackcore import MalformedMoveError, Move, Rules
from services._gen.rackem.v1 import game_pb2 as pb

__all__ = [
    "move_from_pb",
    "move_to_pb",
    "rules_from_pb",
    "rules_to_pb",
]

_RULE_FIELDS = [f.name for f in fields(Rules)]


def rules_to_pb(rules: Rules) -> pb.Rules:
    return pb.Rules(**{name: getattr(rules, name) for name in _RULE_FIELDS})


def rules_from_pb(msg: pb.Rules) -> Rules:
    """Rules from a message; unset fields take the defaults. Raises ``RulesError``."""
    return Rules(**{name: getattr(msg, name) for name in _RULE_FIELDS if msg.HasField(name)})  # type: ignore[arg-type]


def move_to_pb(move: Move) -> pb.Move:
    msg = pb.Move(seat=move.seat, act=move.act, source=move.source or "", go_out=move.go_out)
    if move.slot is not None:
        msg.slot = move.slot
    if move.by:
        msg.by = move.by
    return msg


def move_from_pb(msg: pb.Move, seat: int | None = None, by: str | None = None) -> Move:
    """A move from a message, for ``seat`` when given (the seat never comes from the caller)."""
    if msg.act not in ("draw", "place", "throw", "repair"):
        raise MalformedMoveError("act must be one of draw, place, throw, repair")
    return Move(
        seat=msg.seat if seat is None else seat,
        act=msg.act,  # type: ignore[arg-type]
        source=msg.source or None,  # type: ignore[arg-type]
        slot=msg.slot if msg.HasField("slot") else None,
        go_out=msg.go_out if msg.HasField("go_out") else True,
        by=by,
    )
