"""A seat's view and legal moves as protocol JSON, straight from its protobuf ``View``.

The gateway turns every ``TableView`` a table streams into a ``view`` message, once per
seat per change, so this path skips building a rackcore ``View``: the dict is exactly
``view_from_pb(v).to_dict()``, and the legal list exactly the go-out forms of
``view_from_pb(v).legal_moves()`` without the seat (tests/services/gateway/
test_view_message.py holds both against the rackcore path). The rules dict is worked
out once per distinct ``Rules`` message, the legal list once per situation; rackcore's
``legal_for`` still decides which moves are legal.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from rackcore import legal_for
from services._gen.rackem.v1 import game_pb2 as pb
from services.convert import rules_from_pb

__all__ = ["legal", "seat_view"]


def seat_view(v: pb.View) -> dict[str, Any]:
    """``view_from_pb(v).to_dict()``: the fields in ``View`` order, 0 cards as ``None``."""
    return {
        "seat": v.seat,
        "rules": dict(_rules(v.rules.SerializeToString())),
        "round_no": v.round_no,
        "dealer": v.dealer,
        "turn": v.turn,
        "phase": v.phase,
        "rack": v.rack[:],
        "held": v.held or None,
        "held_from": v.held_from or None,
        "discard": v.discard[:],
        "stock_count": v.stock_count,
        "stock_known": v.stock_known[:] if v.stock_public else None,
        "recycles": v.recycles,
        "scores": v.scores[:],
        "rounds": [
            {"winner": r.winner if r.HasField("winner") else None, "points": r.points[:]}
            for r in v.rounds[:]
        ],
        "turns_taken": v.turns_taken[:],
        "repair_tokens": v.repair_tokens[:],
        "center": [c or None for c in v.center[:]],
        "last_pickup": [c or None for c in v.last_pickup[:]],
        "pickups": [g.cards[:] for g in v.pickups[:]],
        "discarded": [g.cards[:] for g in v.discarded[:]],
        "known": [[c or None for c in g.cards[:]] for g in v.known[:]],
        "commitment": v.commitment or None,
        "moves": v.moves,
        "racks": [g.cards[:] for g in v.racks[:]] if v.racks else None,
        "winner": v.winner if v.HasField("winner") else None,
        "seed": v.seed or None,
    }


def legal(v: pb.View, rules: dict[str, Any]) -> list[dict[str, Any]]:
    """The seat's legal go-out moves as JSON without ``seat`` (``rules`` is its full dict)."""
    if v.turn != v.seat or v.phase not in ("draw", "resolve"):
        return []
    can_repair = v.phase == "resolve" and rules["repair_token"] and v.repair_tokens[v.seat]
    moves = _legal(v.seat, v.phase, v.held_from or None, len(v.discard) > 0, bool(can_repair))
    return [dict(move) for move in moves]


@lru_cache(maxsize=64)
def _rules(serialized: bytes) -> dict[str, Any]:
    """The full rules dict of a serialized ``Rules`` (read only: callers copy it)."""
    return rules_from_pb(pb.Rules.FromString(serialized)).to_dict(full=True)


@lru_cache(maxsize=256)
def _legal(
    seat: int, phase: str, held_from: str | None, can_draw_discard: bool, can_repair: bool
) -> tuple[dict[str, Any], ...]:
    """The go-out forms of ``legal_for``'s moves as JSON without ``seat`` (read only)."""
    out = []
    for move in legal_for(seat, phase, held_from, can_draw_discard, can_repair):
        if move.go_out:
            entry = move.to_dict()
            del entry["seat"]
            out.append(entry)
    return tuple(out)
