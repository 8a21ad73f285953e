"""An empty stock, recycles, the stalemate and the turn cap (docs/rules.md, *Empty stock*)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from rackcore import Match, Move, Rules, Stream, rack_points, shuffle

Stacked = Callable[..., Match]
SEED = bytes(range(32))


def _throw_until_stock_is_empty(match: Match) -> None:
    while match.stock:
        match.apply(Move.draw(match.turn, "stock"))
        match.apply(Move.throw(match.turn, go_out=False))


def test_a_recycle_turns_the_pile_over_oldest_first_and_keeps_the_top(stacked: Stacked) -> None:
    match = stacked(discard=40, stock=list(range(1, 20)))
    _throw_until_stock_is_empty(match)
    assert match.discard == [40, *range(1, 20)]
    match.apply(Move.draw(match.turn, "stock"))
    assert match.held == 40  # the oldest discard became the top of the stock
    assert match.stock == list(range(1, 19))
    assert match.discard == [19]  # the top discard stayed face up
    assert match.recycles == 1
    assert match.stock_public


def test_a_discard_draw_from_an_empty_stock_does_not_recycle(stacked: Stacked) -> None:
    match = stacked(discard=40, stock=list(range(1, 20)))
    _throw_until_stock_is_empty(match)
    match.apply(Move.draw(match.turn, "discard"))
    assert (match.held, match.stock, match.recycles) == (19, [], 0)


def test_reshuffle_on_recycle_uses_the_stream_recycle_r_k() -> None:
    match = Match(Rules(reshuffle_on_recycle=True), SEED)
    _throw_until_stock_is_empty(match)
    pile = list(match.discard)
    match.apply(Move.draw(match.turn, "stock"))
    expected = shuffle(pile[:-1], Stream(SEED, "recycle/1/1"))
    assert expected != pile[:-1]
    assert [match.held, *match.stock] == expected
    assert match.discard == pile[-1:]
    assert not match.stock_public


def test_a_recycle_in_round_2_uses_r_2() -> None:
    match = Match(Rules(reshuffle_on_recycle=True, max_recycles=1), SEED)
    for _ in range(2):
        _throw_until_stock_is_empty(match)
        match.apply(Move.draw(match.turn, "stock"))
        if match.phase == "resolve":
            match.apply(Move.throw(match.turn, go_out=False))
    assert match.phase == "round_over"
    match.apply(Move.draw(match.turn, "stock"))
    match.apply(Move.throw(match.turn, go_out=False))
    assert match.round_no == 2
    _throw_until_stock_is_empty(match)
    pile = list(match.discard)
    match.apply(Move.draw(match.turn, "stock"))
    assert [match.held, *match.stock] == shuffle(pile[:-1], Stream(SEED, "recycle/2/1"))


def test_the_second_recycle_of_a_round_uses_k_2() -> None:
    match = Match(Rules(reshuffle_on_recycle=True), SEED)
    _throw_until_stock_is_empty(match)
    match.apply(Move.draw(match.turn, "stock"))
    match.apply(Move.throw(match.turn, go_out=False))
    _throw_until_stock_is_empty(match)
    pile = list(match.discard)
    match.apply(Move.draw(match.turn, "stock"))
    assert match.recycles == 2
    assert [match.held, *match.stock] == shuffle(pile[:-1], Stream(SEED, "recycle/1/2"))


def test_without_reshuffle_a_seeded_recycle_keeps_the_order() -> None:
    match = Match(Rules(), SEED)
    _throw_until_stock_is_empty(match)
    pile = list(match.discard)
    match.apply(Move.draw(match.turn, "stock"))
    assert [match.held, *match.stock] == pile[:-1]


@pytest.mark.parametrize("max_recycles", [0, 1, 3])
def test_the_round_is_a_stalemate_after_max_recycles(stacked: Stacked, max_recycles: int) -> None:
    match = stacked(Rules(max_recycles=max_recycles, target=1000))
    for _ in range(max_recycles):
        _throw_until_stock_is_empty(match)
        match.apply(Move.draw(match.turn, "stock"))
        match.apply(Move.throw(match.turn, go_out=False))
    _throw_until_stock_is_empty(match)
    assert match.recycles == max_recycles
    drawer = match.turn
    match.apply(Move.draw(drawer, "stock"))
    assert match.phase == "round_over"
    assert match.held is None
    result = match.rounds[-1]
    assert result.winner is None
    assert result.points == tuple(rack_points(rack) for rack in match.racks)
    assert match.history[-1] == Move.draw(drawer, "stock")


def test_the_turn_cap_ends_the_round_with_no_winner(stacked: Stacked) -> None:
    match = stacked(Rules(turn_cap=50, target=1000))
    while match.phase == "draw":
        match.apply(Move.draw(match.turn, "discard"))
        match.apply(Move.place(match.turn, 0, go_out=False))
    assert match.phase == "round_over"
    assert match.turns_taken == [49, 50]  # seat 1 moved first and completed 50 turns
    assert match.rounds[-1].winner is None
    assert match.rounds[-1].points == tuple(rack_points(rack) for rack in match.racks)


def test_turns_are_counted_per_round(stacked: Stacked) -> None:
    match = stacked(Rules(turn_cap=50, target=1000), later=[list(range(1, 41))])
    while match.phase == "draw":
        match.apply(Move.draw(match.turn, "discard"))
        match.apply(Move.place(match.turn, 0, go_out=False))
    match.apply(Move.draw(match.turn, "stock"))
    assert match.round_no == 2
    assert match.turns_taken == [0, 0]


def test_going_out_on_the_capped_turn_still_goes_out(stacked: Stacked) -> None:
    winning = [1, 3, 5, 7, 9, 11, 12, 13, 17, 19]
    match = stacked(Rules(turn_cap=50, max_recycles=10, target=1000), racks={1: winning})
    while match.turns_taken[1] < 49 or match.turn != 1:
        match.apply(Move.draw(match.turn, "stock"))
        match.apply(Move.throw(match.turn, go_out=False))
    assert match.recycles > 0
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.throw(1))
    assert match.turns_taken[1] == 50
    assert match.rounds[-1].winner == 1
