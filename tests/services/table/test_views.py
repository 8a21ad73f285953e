"""What leaves a table: each seat's ``TableView``, its own ``observe`` view (as JSON) in the
public facts."""

from __future__ import annotations

import json
import random

from rackcore import Match, Rules, observe
from services._gen.rackem.v1 import game_pb2
from services.convert import move_to_pb
from services.table.stored import SeatMeta, TableMeta, TableState
from services.table.views import legal_json, seat_infos, table_view, table_views, view_json

NOW = 1_700_000_000_000


def _reference(
    meta: TableMeta, match: Match, state: TableState, seats: list[game_pb2.SeatInfo], seat: int
) -> game_pb2.TableView:
    """One seat's message built field by field, as the table built it before ``table_views``."""
    msg = game_pb2.TableView(
        table_id=meta.table_id,
        code=meta.code,
        version=len(match.history),
        view_json=view_json(observe(match, seat)),
        legal_json=legal_json(observe(match, seat)),
        seats=seats,
        status=state.status,
        deadline_ms=state.deadline_ms,
        remaining_ms=max(0, state.deadline_ms - NOW) if state.deadline_ms else 0,
        continue_deadline_ms=state.continue_deadline_ms if state.status == "round_over" else 0,
        continued=state.continued if state.status == "round_over" else [],
        ended_reason=state.ended_reason,
    )
    if match.history:
        msg.last_move.CopyFrom(move_to_pb(match.history[-1]))
    return msg


def test_each_seat_gets_its_own_view_in_the_same_public_facts() -> None:
    rnd = random.Random(3)
    rules = Rules(players=4, partners=True, visible_center=True)
    match = Match(rules, rnd.randbytes(32))
    meta = TableMeta(
        table_id="t0123456789abcdef",
        code="K7MX2Q",
        rules=rules.to_dict(),
        seed="",
        seats=tuple(SeatMeta(f"P{n}", n > 1, "easy", "") for n in range(4)),
        created_ms=NOW,
    )
    state = TableState.new(4)
    checked = 0
    while match.phase not in ("round_over", "match_over"):
        state.status = "playing"
        state.deadline_ms = rnd.choice([0, NOW - 5, NOW + 20_000])
        seats = seat_infos(meta, ["human", "human", "bot", "cover"], [True] * 4, state)
        wanted = {s for s in range(4) if rnd.random() < 0.7}
        views = table_views(meta, match, state, seats, wanted, NOW)
        assert set(views) == wanted
        for seat, msg in views.items():
            assert msg == _reference(meta, match, state, seats, seat)
            assert msg == table_view(meta, match, state, seats, seat, NOW)
            assert json.loads(msg.view_json)["rack"] == list(observe(match, seat).rack)
            checked += 1
        legal = match.legal_moves()
        match.apply(legal[rnd.randrange(len(legal))])
    state.status = "round_over"
    state.continued = [True, False, False, True]
    state.continue_deadline_ms = NOW + 9_000
    seats = seat_infos(meta, ["human"] * 4, [True, False, True, True], state)
    views = table_views(meta, match, state, seats, range(4), NOW)
    assert [views[s] for s in range(4)] == [
        _reference(meta, match, state, seats, s) for s in range(4)
    ]
    assert checked > 20
