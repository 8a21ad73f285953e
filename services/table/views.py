"""What leaves a table: each seat's ``TableView`` (its own ``observe`` view), public summaries."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rackcore import Match, Move, View, observe
from services._gen.rackem.v1 import game_pb2, table_pb2
from services.convert import move_to_pb, reseat_view, rules_to_pb, view_to_pb
from services.table.stored import TableMeta, TableState

__all__ = ["public_move", "seat_infos", "summary", "table_view", "table_views"]


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
    """Each wanted seat's ``TableView``: its own ``observe`` view in the table's public facts,
    which are made once and merged into the first seat's message; every other seat's is a
    copy of that one with its own fields set (``reseat_view``). ``SPECTATOR`` may be wanted
    too: the view of the public information only, which every watcher shares."""
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
    first: tuple[game_pb2.TableView, View] | None = None
    for seat in wanted:
        view = observe(match, seat)
        if first is not None:  # most of a view is public: another seat's differs in a few fields
            msg = game_pb2.TableView()
            msg.CopyFrom(first[0])
            if reseat_view(msg.view, first[1], view):
                views[seat] = msg
                continue
        msg = game_pb2.TableView(view=view_to_pb(view))
        msg.MergeFrom(public)
        views[seat] = msg
        if first is None:
            first = (msg, view)
    return views


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
