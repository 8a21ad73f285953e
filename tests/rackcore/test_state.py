"""Dealing, the shape of a turn, and refusing illegal moves (docs/rules.md, *Dealing*, *A turn*)."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest

from rackcore import (
    IllegalMoveError,
    Match,
    MatchOverError,
    Move,
    NotYourTurnError,
    RackError,
    Rules,
)

SEED = bytes(31) + b"\x01"
Stacked = Callable[..., Match]


def test_the_test_vector_seed_deals_the_documented_round() -> None:
    match = Match(Rules(players=2), SEED)
    assert match.dealer == 0
    assert match.racks[1] == [21, 23, 26, 28, 12, 27, 10, 15, 30, 6]
    assert match.racks[0] == [38, 34, 35, 40, 31, 22, 29, 24, 39, 20]
    assert match.discard == [9]
    assert match.stock[:3] == [8, 13, 17]
    assert len(match.stock) == 19
    assert match.turn == 1
    assert match.phase == "draw"
    assert match.commitment == "ec4916dd28fc4c10d78e287ca5d9cc51ee1ae73cbfde08c6b37324cbfaac8bc5"


@pytest.mark.parametrize(("players", "dealer"), [(2, 0), (3, 1), (4, 2)])
def test_the_first_dealer_comes_from_the_seed(players: int, dealer: int) -> None:
    match = Match(Rules(players=players), SEED)
    assert match.dealer == dealer
    assert match.turn == (dealer + 1) % players


def test_cards_are_dealt_one_at_a_time_from_left_of_the_dealer_into_index_9_first() -> None:
    deck = list(range(1, 51))
    match = Match(Rules(players=3), decks=[deck], dealer=2)
    assert match.racks[0] == [28, 25, 22, 19, 16, 13, 10, 7, 4, 1]
    assert match.racks[1] == [29, 26, 23, 20, 17, 14, 11, 8, 5, 2]
    assert match.racks[2] == [30, 27, 24, 21, 18, 15, 12, 9, 6, 3]
    assert match.discard == [31]
    assert match.stock == list(range(32, 51))
    assert match.turn == 0


def test_the_stacking_helper_deals_exactly_the_chosen_position(stacked: Stacked) -> None:
    rack = [2, 4, 6, 8, 10, 12, 14, 16, 18, 20]
    match = stacked(Rules(players=4), dealer=3, racks={2: rack}, discard=60, stock=[1, 3])
    assert match.racks[2] == rack
    assert match.discard == [60]
    assert match.stock[:2] == [1, 3]
    assert match.turn == 0
    cards = [c for r in match.racks for c in r] + match.discard + match.stock
    assert sorted(cards) == list(range(1, 61))


def _end_round_by_throwing(match: Match) -> None:
    """Draw and throw (staying in) until the stock runs out and max_recycles=0 ends the round."""
    while match.phase in ("draw", "resolve"):
        if match.phase == "draw":
            match.apply(Move.draw(match.turn, "stock"))
        else:
            match.apply(Move.throw(match.turn, go_out=False))


def test_the_deal_passes_left_each_round_and_left_of_the_dealer_starts() -> None:
    match = Match(Rules(players=3, max_recycles=0), SEED)
    dealers = []
    for round_no in (1, 2, 3, 4):
        assert match.round_no == round_no
        dealers.append(match.dealer)
        assert match.turn == (match.dealer + 1) % 3
        _end_round_by_throwing(match)
        assert match.phase == "round_over"
        match.next_round()
    assert dealers == [1, 2, 0, 1]


def test_each_round_deals_a_fresh_shuffle() -> None:
    match = Match(Rules(players=2, max_recycles=0), SEED)
    first = [list(r) for r in match.racks]
    _end_round_by_throwing(match)
    match.next_round()
    assert match.racks != first
    assert match.round_no == 2


def test_a_stock_draw_takes_the_top_of_the_stock(stacked: Stacked) -> None:
    match = stacked(discard=40, stock=[17, 3])
    match.apply(Move.draw(1, "stock"))
    assert (match.held, match.held_from, match.phase) == (17, "stock", "resolve")
    assert match.stock[0] == 3
    assert match.discard == [40]


def test_a_discard_draw_takes_the_top_of_the_discard_pile(stacked: Stacked) -> None:
    match = stacked(discard=40, stock=[17])
    match.apply(Move.draw(1, "discard"))
    assert (match.held, match.held_from) == (40, "discard")
    assert match.discard == []
    assert match.stock[0] == 17


def test_placing_swaps_one_slot_and_the_old_card_goes_face_up(stacked: Stacked) -> None:
    rack = [1, 3, 5, 7, 9, 11, 13, 15, 17, 19]
    match = stacked(racks={1: rack}, discard=40, stock=[2])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.place(1, 4))
    assert match.racks[1] == [1, 3, 5, 7, 2, 11, 13, 15, 17, 19]
    assert match.discard == [40, 9]
    assert (match.held, match.phase, match.turn) == (None, "draw", 0)


def test_throwing_puts_the_drawn_card_on_the_discard_pile(stacked: Stacked) -> None:
    match = stacked(discard=40, stock=[2])
    before = copy.deepcopy(match.racks)
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.throw(1))
    assert match.racks == before
    assert match.discard == [40, 2]
    assert match.turn == 0


def test_play_passes_left_and_wraps_round_the_table(stacked: Stacked) -> None:
    match = stacked(Rules(players=3), dealer=1)
    seen = []
    for _ in range(4):
        seen.append(match.turn)
        match.apply(Move.draw(match.turn, "stock"))
        match.apply(Move.throw(match.turn, go_out=False))
    assert seen == [2, 0, 1, 2]
    assert match.turns_taken == [1, 1, 2]


def test_a_discard_pickup_cannot_be_thrown(stacked: Stacked) -> None:
    match = stacked(discard=40)
    match.apply(Move.draw(1, "discard"))
    before = copy.deepcopy(vars(match))
    with pytest.raises(IllegalMoveError, match="must be placed"):
        match.apply(Move.throw(1))
    assert vars(match) == before
    assert Move.throw(1) not in match.legal_moves()


# Each case: the moves that set the position up, the illegal move, the error it raises.
_ILLEGAL: list[tuple[list[Move], Move, type[RackError]]] = [
    ([], Move.draw(0, "stock"), NotYourTurnError),
    ([], Move.place(1, 3), IllegalMoveError),
    ([], Move.throw(1), IllegalMoveError),
    ([], Move.repair(1, 3), IllegalMoveError),
    ([Move.draw(1, "stock")], Move.draw(1, "stock"), IllegalMoveError),
    ([Move.draw(1, "stock")], Move.draw(1, "discard"), IllegalMoveError),
    ([Move.draw(1, "stock")], Move.place(0, 3), NotYourTurnError),
    ([Move.draw(1, "stock")], Move.repair(1, 0), IllegalMoveError),
    ([Move.draw(1, "discard")], Move.throw(1, go_out=False), IllegalMoveError),
    ([Move.draw(1, "stock"), Move.throw(1)], Move.draw(1, "stock"), NotYourTurnError),
]


@pytest.mark.parametrize(("setup", "move", "error"), _ILLEGAL)
def test_an_illegal_move_raises_a_typed_error_and_changes_nothing(
    stacked: Stacked, setup: list[Move], move: Move, error: type[RackError]
) -> None:
    match = stacked(discard=40)
    for m in setup:
        match.apply(m)
    before = copy.deepcopy(vars(match))
    with pytest.raises(error):
        match.apply(move)
    assert vars(match) == before
    assert move not in match.legal_moves()


def test_a_move_after_the_match_is_over_is_refused(stacked: Stacked) -> None:
    winning = [1, 3, 5, 7, 9, 11, 12, 13, 17, 19]
    match = stacked(Rules(target=50), racks={1: winning}, stock=[40])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.throw(1))
    assert match.phase == "match_over"
    assert match.legal_moves() == ()
    before = copy.deepcopy(vars(match))
    for move in (Move.draw(0, "stock"), Move.draw(1, "stock")):
        with pytest.raises(MatchOverError):
            match.apply(move)
    with pytest.raises(IllegalMoveError):
        match.next_round()
    assert vars(match) == before


def test_next_round_is_refused_while_a_round_is_running(stacked: Stacked) -> None:
    match = stacked()
    with pytest.raises(IllegalMoveError, match="not over"):
        match.next_round()


def test_every_listed_legal_move_applies_and_no_other_does(stacked: Stacked) -> None:
    match = stacked(Rules(repair_token=True), discard=40)
    match.apply(Move.draw(1, "stock"))
    legal = match.legal_moves()
    candidates = [Move.place(s, i, g) for s in (0, 1) for i in range(10) for g in (True, False)]
    candidates += [Move.throw(s, g) for s in (0, 1) for g in (True, False)]
    candidates += [Move.repair(s, i) for s in (0, 1) for i in range(9)]
    candidates += [Move.draw(s, src) for s in (0, 1) for src in ("stock", "discard")]
    for move in candidates:
        trial = copy.deepcopy(match)
        if move in legal:
            trial.apply(move)
        else:
            with pytest.raises(IllegalMoveError):
                trial.apply(move)
    assert len(legal) == 22 + 9


def test_history_records_every_applied_move_in_order(stacked: Stacked) -> None:
    match = stacked()
    moves = [Move.draw(1, "stock"), Move.throw(1, go_out=False), Move.draw(0, "discard")]
    for move in moves:
        match.apply(move)
    assert match.history == moves
