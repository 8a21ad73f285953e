from __future__ import annotations

from rackcore import Move
from rackcore._legal import legal_for


def test_in_the_draw_phase_a_seat_may_draw_from_either_pile() -> None:
    assert set(legal_for(1, "draw", None, True, False)) == {
        Move.draw(1, "stock"),
        Move.draw(1, "discard"),
    }


def test_an_empty_discard_pile_cannot_be_drawn_from() -> None:
    assert legal_for(0, "draw", None, False, False) == (Move.draw(0, "stock"),)


def test_between_rounds_the_next_first_player_draws() -> None:
    assert legal_for(2, "round_over", None, True, False) == legal_for(2, "draw", None, True, False)


def test_a_stock_draw_may_be_placed_in_any_slot_or_thrown_going_out_or_not() -> None:
    moves = set(legal_for(0, "resolve", "stock", True, False))
    expected = {Move.place(0, slot, go_out) for slot in range(10) for go_out in (True, False)}
    expected |= {Move.throw(0), Move.throw(0, go_out=False)}
    assert moves == expected


def test_a_discard_pickup_may_only_be_placed() -> None:
    moves = legal_for(0, "resolve", "discard", True, False)
    assert {m.act for m in moves} == {"place"}
    assert len(moves) == 20


def test_a_repair_token_adds_the_nine_swaps() -> None:
    moves = set(legal_for(1, "resolve", "stock", True, True))
    repairs = {m for m in moves if m.act == "repair"}
    assert repairs == {Move.repair(1, i) for i in range(9)}
    assert moves - repairs == set(legal_for(1, "resolve", "stock", True, False))


def test_nothing_is_legal_in_an_unknown_phase() -> None:
    assert legal_for(0, "match_over", None, True, True) == ()


def test_legal_moves_are_listed_in_a_stable_order() -> None:
    first = legal_for(3, "resolve", "stock", True, True)
    assert first == legal_for(3, "resolve", "stock", True, True)
    assert first[0] == Move.place(3, 0)
