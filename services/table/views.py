"""What leaves a table: each seat's ``TableView`` (its own ``observe`` view and legal moves, as
JSON), public summaries."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import orjson

from rackcore import Match, Move, View, observe
from services._gen.rackem.v1 import game_pb2, table_pb2
from services.convert import move_to_pb, rules_to_pb
from services.table.stored import TableMeta, TableState

__all__ = [
    "legal_json",
    "public_move",
    "seat_infos",
    "summary",
    "table_view",
    "table_views",
    "view_json",
    "view_of",
]


def seat_infos(
    meta: TableMeta, kinds: Sequence[str], connected: Sequence[bool], state: TableState
) -> list[game_pb2.SeatInfo]:
    out = []
    for seat, spec in enumerate(meta.seats):
        kind = kinds[seat]
        out.append(
            game_pb2.SeatInfo(
                seat=seat,
                name=spec.name,
                kind=kind,
                connected=connected[seat],
                level=spec.level if kind != "human" else "",
                left=state.left[seat],
            )
        )
    return out


def public_move(move: Move) -> game_pb2.Move:
    """A move as every seat may see it: who, what, where; never the card drawn."""
    return move_to_pb(move)


def table_view(
    meta: TableMeta,
    match: Match,
    state: TableState,
    seats: Sequence[game_pb2.SeatInfo],
    seat: int,
    now: int,
) -> game_pb2.TableView:
    return table_views(meta, match, state, seats, (seat,), now)[seat]


def table_views(
    meta: TableMeta,
    match: Match,
    state: TableState,
    seats: Sequence[game_pb2.SeatInfo],
    wanted: Iterable[int],
    now: int,
    watchers: int = 0,
) -> dict[int, game_pb2.TableView]:
    """Each wanted seat's ``TableView``: the table's public facts, made once, with the seat's
    own ``observe`` view and legal moves as JSON (``view_json``, ``legal_json``), made here
    once per seat per change so that no reader of the stream works them out again.
    ``SPECTATOR`` may be wanted too: the view of the public information only, which every
    watcher shares."""
    public = game_pb2.TableView(
        table_id=meta.table_id,
        code=meta.code,
        version=len(match.history),
        seats=seats,
        status=state.status,
        deadline_ms=state.deadline_ms,
        remaining_ms=max(0, state.deadline_ms - now) if state.deadline_ms else 0,
        continue_deadline_ms=state.continue_deadline_ms if state.status == "round_over" else 0,
        continued=state.continued if state.status == "round_over" else [],
        ended_reason=state.ended_reason,
        watchers=watchers,
    )
    if match.history:
        public.last_move.CopyFrom(public_move(match.history[-1]))
    views = {}
    for seat in wanted:
        view = observe(match, seat)
        msg = game_pb2.TableView()
        msg.CopyFrom(public)
        msg.view_json = view_json(view)
        msg.legal_json = legal_json(view)
        views[seat] = msg
    return views


def view_json(view: View) -> str:
    """``view.to_dict()`` as JSON text. orjson writes a dataclass field by field, in order,
    nested dataclasses as objects and tuples as arrays: exactly ``to_dict()``'s shape
    (tests/services/table/test_view_json.py holds the two equal), at a quarter of its cost."""
    return orjson.dumps(view).decode()


def view_of(msg: game_pb2.TableView) -> View:
    """The seat's view a ``TableView`` carries, back as rackcore's ``View``."""
    return View.from_dict(orjson.loads(msg.view_json))


_NONE = "[]"
_legal_made: dict[int, tuple[tuple[Move, ...], str]] = {}


def legal_json(view: View) -> str:
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
        made = _legal_made[id(moves)] = (moves, orjson.dumps(entries).decode())
    return made[1]


def summary(
    meta: TableMeta,
    match: Match,
    state: TableState,
    seats: Sequence[game_pb2.SeatInfo],
    replica: str,
) -> table_pb2.TableSummary:
    return table_pb2.TableSummary(
        table_id=meta.table_id,
        code=meta.code,
        rules=rules_to_pb(match.rules),
        seats=seats,
        status=state.status,
        version=len(match.history),
        round_no=match.round_no,
        scores=match.scores,
        commitment=match.commitment or "",
        replica=replica,
    )
