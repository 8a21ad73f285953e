"""rackcore values ⇄ protobuf messages, in one place."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from operator import attrgetter
from typing import Any

from rackcore import MalformedMoveError, Move, RoundResult, Rules, View
from services._gen.rackem.v1 import game_pb2 as pb

__all__ = [
    "move_from_pb",
    "move_to_pb",
    "reseat_view",
    "rules_from_pb",
    "rules_to_pb",
    "view_from_pb",
    "view_to_pb",
]

_RULE_FIELDS = [f.name for f in fields(Rules)]


def rules_to_pb(rules: Rules) -> pb.Rules:
    return pb.Rules(**{name: getattr(rules, name) for name in _RULE_FIELDS})


_rules_made: dict[Rules, pb.Rules] = {}


def _rules_pb(rules: Rules) -> pb.Rules:
    """``rules_to_pb`` made once per distinct rules (a message is copied where it is set)."""
    made = _rules_made.get(rules)
    if made is None:
        if len(_rules_made) >= 1024:  # rules are few in practice; never let them pile up
            _rules_made.clear()
        made = _rules_made[rules] = rules_to_pb(rules)
    return made


def rules_from_pb(msg: pb.Rules) -> Rules:
    """Rules from a message; unset fields take the defaults. Raises ``RulesError``."""
    return Rules(**{name: getattr(msg, name) for name in _RULE_FIELDS if msg.HasField(name)})  # type: ignore[arg-type]


def move_to_pb(move: Move) -> pb.Move:
    msg = pb.Move(seat=move.seat, act=move.act, source=move.source or "", stay_in=not move.go_out)
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
        go_out=not msg.stay_in,
        by=by,
    )


def _add_cards(field: Any, groups: Sequence[Sequence[int | None]]) -> None:
    """Append one ``Cards`` per group to a repeated field (None as 0): ``add`` and ``extend``
    in place, about twice as fast as building the messages and assigning them."""
    for group in groups:
        field.add().cards.extend(group if None not in group else [c or 0 for c in group])


def view_to_pb(view: View) -> pb.View:
    msg = pb.View(
        seat=view.seat,
        rules=_rules_pb(view.rules),
        round_no=view.round_no,
        dealer=view.dealer,
        turn=view.turn,
        phase=view.phase,
        rack=view.rack,
        held=view.held or 0,
        held_from=view.held_from or "",
        discard=view.discard,
        stock_count=view.stock_count,
        stock_public=view.stock_known is not None,
        stock_known=view.stock_known or (),
        recycles=view.recycles,
        scores=view.scores,
        rounds=[
            pb.RoundResult(winner=r.winner, points=r.points)
            if r.winner is not None
            else pb.RoundResult(points=r.points)
            for r in view.rounds
        ],
        turns_taken=view.turns_taken,
        repair_tokens=view.repair_tokens,
        center=[c or 0 for c in view.center],
        last_pickup=[c or 0 for c in view.last_pickup],
        commitment=view.commitment or "",
        moves=view.moves,
        seed=view.seed or "",
    )
    _add_cards(msg.pickups, view.pickups)
    _add_cards(msg.discarded, view.discarded)
    _add_cards(msg.known, view.known)
    _add_cards(msg.racks, view.racks or ())
    if view.winner is not None:
        msg.winner = view.winner
    return msg


_SEAT_FIELDS = ("seat", "rack", "held")
"""What one seat's view of a moment may hold that another seat's does not (``observe``)."""
_shared = attrgetter(*(f.name for f in fields(View) if f.name not in _SEAT_FIELDS))


def reseat_view(msg: pb.View, made_from: View, view: View) -> bool:
    """Turn ``msg`` (``view_to_pb(made_from)``) into ``view_to_pb(view)`` in place, where the
    two views differ only in what is the seat's own: True if done, False (``msg`` left as
    it was) if they differ in anything else.

    Another seat's view of the same moment then costs a copy of the message and three
    fields, not a new message: most of a view (piles, pickups, scores) is public.
    """
    if _shared(view) != _shared(made_from):
        return False
    msg.seat = view.seat
    msg.ClearField("rack")
    msg.rack.extend(view.rack)
    msg.held = view.held or 0
    return True


def _none(card: int) -> int | None:
    return card or None


def view_from_pb(msg: pb.View) -> View:
    return View(
        seat=msg.seat,
        rules=rules_from_pb(msg.rules),
        round_no=msg.round_no,
        dealer=msg.dealer,
        turn=msg.turn,
        phase=msg.phase,
        rack=tuple(msg.rack),
        held=_none(msg.held),
        held_from=msg.held_from or None,
        discard=tuple(msg.discard),
        stock_count=msg.stock_count,
        stock_known=tuple(msg.stock_known) if msg.stock_public else None,
        recycles=msg.recycles,
        scores=tuple(msg.scores),
        rounds=tuple(
            RoundResult(r.winner if r.HasField("winner") else None, tuple(r.points))
            for r in msg.rounds
        ),
        turns_taken=tuple(msg.turns_taken),
        repair_tokens=tuple(msg.repair_tokens),
        center=tuple(_none(c) for c in msg.center),
        last_pickup=tuple(_none(c) for c in msg.last_pickup),
        pickups=tuple(tuple(g.cards) for g in msg.pickups),
        discarded=tuple(tuple(g.cards) for g in msg.discarded),
        known=tuple(tuple(_none(c) for c in g.cards) for g in msg.known),
        commitment=msg.commitment or None,
        moves=msg.moves,
        racks=tuple(tuple(g.cards) for g in msg.racks) if msg.racks else None,
        winner=msg.winner if msg.HasField("winner") else None,
        seed=msg.seed or None,
    )
