from __future__ import annotations

from rackcore import Match, Move, Rules
from services.table.progress import abandon, after_move, cover, deal, seat_kind
from services.table.stored import SeatMeta, TableMeta, TableState

NOW = 1_764_000_000_000


def _table(bot_seat: int | None = None) -> tuple[Match, TableMeta, TableState]:
    match = Match(Rules(players=2, target=50), bytes(range(32)))
    seats = tuple(
        SeatMeta(f"S{s}", s == bot_seat, "easy", "" if s == bot_seat else "ab" * 32)
        for s in range(2)
    )
    meta = TableMeta("t1", "", match.rules.to_dict(), bytes(range(32)).hex(), seats, NOW)
    return match, meta, TableState.new(2)


def test_a_seat_is_human_bot_or_cover() -> None:
    _, meta, state = _table(bot_seat=1)
    assert [seat_kind(meta, state, s) for s in range(2)] == ["human", "bot"]
    cover(state, 0)
    assert seat_kind(meta, state, 0) == "cover" and state.deadline_ms == 0
    state.left[0] = True
    assert seat_kind(meta, state, 0) == "bot"


def test_each_human_decision_gets_its_own_clock() -> None:
    match, meta, state = _table()
    match.apply(Move.draw(match.turn, "stock"))
    after_move(match, meta, state, NOW, decision_ms=45_000, continue_ms=15_000)
    assert (state.status, state.deadline_ms) == ("playing", NOW + 45_000)


def test_a_bot_to_move_has_no_clock() -> None:
    match, meta, state = _table(bot_seat=1)
    if match.turn == 1:
        match.apply(Move.draw(1, "stock"))
        match.apply(Move.throw(1))
    match.apply(Move.draw(0, "stock"))
    match.apply(Move.throw(0))
    after_move(match, meta, state, NOW, decision_ms=45_000, continue_ms=15_000)
    assert match.turn == 1 and state.deadline_ms == 0


def test_a_round_ends_into_the_round_over_screen_and_deals_after_it() -> None:
    match, meta, state = _table()
    while match.phase != "round_over":  # nobody goes out, and 45 points cannot reach 50
        seat = match.turn
        match.apply(Move.draw(seat, "stock"))
        if match.phase == "resolve":  # an empty stock past its recycles ends the round
            match.apply(Move.throw(seat))
    after_move(match, meta, state, NOW, decision_ms=45_000, continue_ms=15_000)
    assert (state.status, state.continue_deadline_ms, state.continued) == (
        "round_over",
        NOW + 15_000,
        [False, False],
    )
    deal(match, meta, state, NOW + 1, decision_ms=45_000)
    assert match.round_no == 2 and state.dealt_round == 2
    assert (state.status, state.deadline_ms) == ("playing", NOW + 1 + 45_000)


def test_the_last_move_finishes_the_table() -> None:
    match, meta, state = _table()
    while match.phase != "match_over":
        seat = match.turn
        if match.phase == "round_over":
            match.next_round()
            continue
        match.apply(Move.draw(seat, "discard" if match.discard else "stock"))
        if match.phase == "resolve":  # place the card where a sorted rack wants it
            held = match.held or 0
            match.apply(Move.place(seat, min(9, (held - 1) * 10 // 40)))
    after_move(match, meta, state, NOW, decision_ms=45_000, continue_ms=15_000)
    assert (state.status, state.ended_reason, state.deadline_ms) == ("finished", "finished", 0)


def test_an_abandoned_table_is_ended() -> None:
    _, _, state = _table()
    state.deadline_ms = NOW
    abandon(state)
    assert (state.status, state.ended_reason, state.deadline_ms, state.over) == (
        "ended",
        "abandoned",
        0,
        True,
    )
