"""What leaves a table: each seat's ``view`` message, its own ``observe`` view and legal moves in
the same public facts."""

from __future__ import annotations

import random
from typing import Any

from rackcore import Match, Move, Rules, observe
from services._gen.rackem.v1 import game_pb2
from services.gateway.protocol import schemas
from services.table.stored import SeatMeta, TableMeta, TableState
from services.table.views import seat_facts, summary, table_views
from table.decoded import message_of

NOW = 1_700_000_000_000
PER_SEAT = ("legal", "view")


def _meta(rules: Rules, bots: tuple[bool, ...]) -> TableMeta:
    return TableMeta(
        table_id="t0123456789abcdef",
        code="K7MX2Q",
        rules=rules.to_dict(),
        seed="",
        seats=tuple(SeatMeta(f"P{n}", bot, "easy", "") for n, bot in enumerate(bots)),
        created_ms=NOW,
    )


def _public(message: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in message.items() if name not in PER_SEAT}


def test_each_seat_gets_its_own_view_in_the_same_public_facts() -> None:
    rnd = random.Random(3)
    rules = Rules(players=4, partners=True, visible_center=True)
    match = Match(rules, rnd.randbytes(32))
    meta = _meta(rules, (False, False, True, True))
    state = TableState.new(4)
    checked = 0
    while match.phase not in ("round_over", "match_over"):
        state.status = "playing"
        state.deadline_ms = rnd.choice([0, NOW - 5, NOW + 20_000])
        seats = seat_facts(meta, ["human", "human", "bot", "cover"], [True] * 4, state)
        wanted = {s for s in range(4) if rnd.random() < 0.7}
        views = table_views(meta, match, state, seats, wanted, NOW, watchers=2)
        assert set(views) == wanted
        publics = []
        for seat, msg in views.items():
            message = message_of(msg)
            assert message["view"] == observe(match, seat).to_dict()
            assert (msg.table_id, msg.version, msg.status) == (
                meta.table_id,
                len(match.history),
                "playing",
            )
            assert message["seats"] == seats and message["watchers"] == 2
            assert message["remaining_ms"] == (20_000 if state.deadline_ms > NOW else 0)
            publics.append(_public(message))
            checked += 1
        assert all(public == publics[0] for public in publics)
        legal = match.legal_moves()
        match.apply(legal[rnd.randrange(len(legal))])
    state.status = "round_over"
    state.continued = [True, False, False, True]
    state.continue_deadline_ms = NOW + 9_000
    seats = seat_facts(meta, ["human"] * 4, [True, False, True, True], state)
    views = table_views(meta, match, state, seats, range(4), NOW)
    for seat in range(4):
        message = message_of(views[seat])
        assert message["continued"] == [True, False, False, True]
        assert message["continue_deadline_ms"] == NOW + 9_000
        assert message["view"] == observe(match, seat).to_dict()
        assert schemas()["view"].error(message) is None
    assert checked > 20


def test_a_view_message_holds_the_seats_own_view_and_matches_its_schema() -> None:
    rules = Rules(players=2)
    match = Match(rules, seed=bytes(32))
    meta = _meta(rules, (False, True))
    state = TableState.new(2)
    seats = seat_facts(meta, ["human", "bot"], [True, False], state)
    views = table_views(meta, match, state, seats, (0, 1), NOW)
    message, other = message_of(views[0]), message_of(views[1])
    assert schemas()["view"].error(message) is None
    assert message["view"] == observe(match, 0).to_dict()
    assert message["last_move"] is None
    assert other["view"]["rack"] == list(match.racks[1])
    assert message["view"]["rack"] != other["view"]["rack"]
    assert message["seats"][1] == {
        "seat": 1,
        "name": "P1",
        "kind": "bot",
        "connected": False,
        "level": "easy",
        "left": False,
    }


def test_legal_moves_are_listed_without_seat_and_without_the_stay_in_forms() -> None:
    rules = Rules(players=2)
    match = Match(rules, seed=bytes(32))
    meta = _meta(rules, (False, False))
    state = TableState.new(2)
    turn = match.turn

    def message(seat: int) -> dict[str, Any]:
        return message_of(table_views(meta, match, state, [], (seat,), NOW)[seat])

    assert message(1 - turn)["legal"] == []
    assert message(turn)["legal"] == [
        {"act": "draw", "from": "stock"},
        {"act": "draw", "from": "discard"},
    ]
    match.apply(Move.draw(turn, "stock").with_by("human"))
    resolving = message(turn)
    assert resolving["legal"] == [{"act": "place", "slot": s} for s in range(10)] + [
        {"act": "throw"}
    ]
    assert resolving["last_move"] == {"seat": turn, "act": "draw", "from": "stock", "by": "human"}
    assert message(1 - turn)["last_move"] == resolving["last_move"]  # no card: public
    assert schemas()["view"].error(resolving) is None


def test_a_summarys_seats_are_the_views_seats() -> None:
    rules = Rules(players=3)
    match = Match(rules, seed=bytes(32))
    meta = _meta(rules, (False, True, False))
    state = TableState.new(3)
    state.left[2] = True
    seats = seat_facts(meta, ["human", "bot", "bot"], [True, False, False], state)
    made = summary(meta, match, state, seats, "127.0.0.1:1")
    assert list(made.seats) == [game_pb2.SeatInfo(**seat) for seat in seats]
    assert [s.kind for s in made.seats] == ["human", "bot", "bot"] and made.seats[2].left
