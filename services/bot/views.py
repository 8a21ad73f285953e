"""What the bot service takes for a view: the request's JSON, checked to be a well-typed view
of a seat whose turn it is (the table sends ``View.to_dict()``; anything else is refused)."""

from __future__ import annotations

import orjson

from rackcore import RackError, View
from rackcore.bots import LEVELS
from services._gen.rackem.v1 import bot_pb2
from services.common.errors import ServiceError

__all__ = ["checked_view"]

SLOTS = 10


def checked_view(request: bot_pb2.ChooseMoveRequest) -> View:
    """The request's view, refused with ``bad_request`` unless it is a view to move from."""
    if request.level not in LEVELS:
        raise ServiceError("bad_request", f"level must be one of {', '.join(LEVELS)}")
    if not request.view_json:
        raise ServiceError("bad_request", "a view is required")
    try:
        view = View.from_dict(orjson.loads(request.view_json))
    except (ValueError, RackError) as exc:  # orjson's JSONDecodeError is a ValueError
        raise ServiceError("bad_request", f"not a view: {exc}") from None
    if not _well_typed(view):
        raise ServiceError("bad_request", "not a view: a field has the wrong type")
    n = view.players
    if not 0 <= view.seat < n or not 0 <= view.turn < n:
        raise ServiceError("bad_request", "the view's seat or turn is not at this table")
    if len(view.rack) != SLOTS or len(view.scores) != n or len(view.repair_tokens) != n:
        raise ServiceError("bad_request", "the view is incomplete")
    if not view.my_turn:
        raise ServiceError("bad_request", "it is not this seat's turn in the view")
    if view.phase == "resolve" and view.held is None:
        raise ServiceError("bad_request", "the view holds no card to resolve")
    return view


_INTS = ("seat", "round_no", "dealer", "turn", "stock_count", "recycles", "moves")
_INT_TUPLES = ("rack", "discard", "scores", "turns_taken")


def _well_typed(view: View) -> bool:
    """Whether every field holds what a table's view holds there (JSON could hold anything)."""
    return (
        all(type(getattr(view, name)) is int for name in _INTS)
        and all(_ints(getattr(view, name)) for name in _INT_TUPLES)
        and (view.held is None or type(view.held) is int)
        and view.held_from in (None, "stock", "discard")
        and type(view.phase) is str
        and type(view.repair_tokens) is tuple
        and all(type(t) is bool for t in view.repair_tokens)
        and all(
            type(groups) is tuple and all(_ints(g, none=True) for g in groups)
            for groups in (view.pickups, view.discarded, view.known)
        )
        and _ints(view.center, none=True)
        and _ints(view.last_pickup, none=True)
        and (view.stock_known is None or _ints(view.stock_known))
        and (view.racks is None or (type(view.racks) is tuple and all(map(_ints, view.racks))))
        and all(type(r.winner) in (int, type(None)) and _ints(r.points) for r in view.rounds)
        and (view.winner is None or type(view.winner) is int)
        and all(v is None or type(v) is str for v in (view.commitment, view.seed))
    )


def _ints(value: object, none: bool = False) -> bool:
    return type(value) is tuple and all(type(v) is int or (none and v is None) for v in value)
