"""What leaves a table: each seat's ``view`` message (made here, once per seat per change, as
the JSON text its connection gets), public summaries.

The protocol's ``view`` message (docs/protocol.md, services/gateway/schemas/view.json) is
written here and nowhere else: the table's public facts once per change, then for each
wanted seat its own ``observe`` view and legal moves, spliced in as JSON text. The gateway
sends the text as it is; the bot service reads a view's JSON (``view_json``) back with
``View.from_dict``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

import orjson

from rackcore import Match, Move, View, observe
from services._gen.rackem.v1 import game_pb2, table_pb2
from services.convert import rules_to_pb
from services.table.stored import TableMeta, TableState

__all__ = [
    "last_move",
    "legal_json",
    "seat_facts",
    "summary",
    "table_views",
    "view_json",
]

Seats = Sequence[dict[str, Any]]
"""Each seat's public facts, in the ``view`` message's form (``seat_facts``)."""


def seat_facts(
    meta: TableMeta, kinds: Sequence[str], connected: Sequence[bool], state: TableState
) -> list[dict[str, Any]]:
    """Each seat's public facts: ``seat``, ``name``, ``kind`` (human, bot or cover),
    ``connected``, ``level`` (a bot's or a cover's), ``left``."""
    out = []
    for seat, spec in enumerate(meta.seats):
        kind = kinds[seat]
        out.append(
            {
                "seat": seat,
                "name": spec.name,
                "kind": kind,
                "connected": connected[seat],
                "level": spec.level if kind != "human" else "",
                "left": state.left[seat],
            }
        )
    return out


def last_move(move: Move) -> dict[str, Any]:
    """A move as every seat may see it: who, what, where (``from`` for a draw, ``slot``),
    and who decided (``by``); never the card drawn."""
    out: dict[str, Any] = {"seat": move.seat, "act": move.act}
    if move.source:
        out["from"] = move.source
    if move.slot is not None:
        out["slot"] = move.slot
    if move.by:
        out["by"] = move.by
    return out


def table_views(
    meta: TableMeta,
    match: Match,
    state: TableState,
    seats: Seats,
    wanted: Iterable[int],
    now: int,
    watchers: int = 0,
    hide_seed: bool = False,
) -> dict[int, game_pb2.TableView]:
    """Each wanted seat's ``TableView``: its ``view`` message, the table's public facts
    written once and each seat's own ``observe`` view and legal moves spliced in.
    ``SPECTATOR`` may be wanted too: the view of the public information only, which every
    watcher shares. ``hide_seed``: the match-over view leaves the seed out (a daily table
    while its day is open, daily.py)."""
    status = state.status
    round_over = status == "round_over"
    deadline = state.deadline_ms
    version = len(match.history)
    public = orjson.dumps(
        {
            "type": "view",
            "table_id": meta.table_id,
            "code": meta.code,
            "version": version,
            "status": status,
            "seats": seats,
            "deadline_ms": max(0, deadline),
            "remaining_ms": max(0, deadline - now) if deadline else 0,
            "continue_deadline_ms": max(0, state.continue_deadline_ms) if round_over else 0,
            "continued": state.continued if round_over else [],
            "last_move": last_move(match.history[-1]) if match.history else None,
            "ended_reason": state.ended_reason,
        }
    )
    head = public[:-1] + b',"legal":'  # the message goes on where the public facts end
    tail = b',"watchers":%d}' % max(0, watchers)
    views = {}
    for seat in wanted:
        view = observe(match, seat)
        if hide_seed and view.seed is not None:
            view = replace(view, seed=None)
        message = b"".join((head, legal_json(view), b',"view":', orjson.dumps(view), tail))
        views[seat] = game_pb2.TableView(
            table_id=meta.table_id, version=version, status=status, message=message
        )
    return views


def view_json(view: View) -> str:
    """``view.to_dict()`` as JSON text. orjson writes a dataclass field by field, in order,
    nested dataclasses as objects and tuples as arrays: exactly ``to_dict()``'s shape
    (tests/services/table/test_view_json.py holds the two equal), at a quarter of its cost."""
    return orjson.dumps(view).decode()


_NONE = b"[]"
_legal_made: dict[int, tuple[tuple[Move, ...], bytes]] = {}


def legal_json(view: View) -> bytes:
    """The seat's legal moves as the protocol's ``legal`` list: the go-out forms of
    ``view.legal_moves()`` without ``seat``, as JSON text (``[]`` when it is not the
    seat's decision). rackcore hands out one tuple per situation, so the text is made
    once per tuple (held here with it, so its ``id`` stays its own)."""
    if not view.my_turn:
        return _NONE
    moves = view.legal_moves()
    made = _legal_made.get(id(moves))
    if made is None or made[0] is not moves:
        if len(_legal_made) >= 1024:  # situations are few; never let them pile up
            _legal_made.clear()
        entries = []
        for move in moves:
            if move.go_out:
                entry = move.to_dict()
                del entry["seat"]
                entries.append(entry)
        made = _legal_made[id(moves)] = (moves, orjson.dumps(entries))
    return made[1]


def summary(
    meta: TableMeta,
    match: Match,
    state: TableState,
    seats: Seats,
    replica: str,
) -> table_pb2.TableSummary:
    return table_pb2.TableSummary(
        table_id=meta.table_id,
        code=meta.code,
        rules=rules_to_pb(match.rules),
        seats=[game_pb2.SeatInfo(**seat) for seat in seats],
        status=state.status,
        version=len(match.history),
        round_no=match.round_no,
        scores=match.scores,
        commitment=match.commitment or "",
        replica=replica,
    )
