"""What a seat may see (docs/rules.md and docs/design.md, *Views, not states*)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable

import pytest

from rackcore import Match, Move, RackError, Rules, View, observe

Stacked = Callable[..., Match]
SEED = bytes(range(32))
WINNING = [1, 3, 5, 7, 9, 11, 12, 13, 17, 19]


def test_a_view_holds_its_own_rack_and_no_other_before_the_reveal(stacked: Stacked) -> None:
    match = stacked(racks={0: WINNING})
    for seat in (0, 1):
        view = observe(match, seat)
        assert view.seat == seat
        assert list(view.rack) == match.racks[seat]
        assert view.racks is None
        assert view.seed is None


def test_a_stock_draw_is_seen_by_its_holder_only(stacked: Stacked) -> None:
    match = stacked(stock=[40])
    match.apply(Move.draw(1, "stock"))
    assert observe(match, 1).held == 40
    assert observe(match, 0).held is None
    assert observe(match, 0).held_from == "stock"


def test_a_discard_pickup_is_seen_by_everyone(stacked: Stacked) -> None:
    match = stacked(discard=33)
    match.apply(Move.draw(1, "discard"))
    assert observe(match, 0).held == 33
    assert observe(match, 0).last_pickup == (None, 33)
    assert observe(match, 0).pickups == ((), (33,))


def test_a_placed_pickup_stays_known_in_its_slot_until_replaced(stacked: Stacked) -> None:
    match = stacked(Rules(repair_token=True), discard=33, stock=[40, 39])
    match.apply(Move.draw(1, "discard"))
    match.apply(Move.place(1, 2))
    assert observe(match, 0).known[1] == (None, None, 33, *[None] * 7)
    match.apply(Move.draw(0, "stock"))
    match.apply(Move.throw(0))
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.repair(1, 2))
    assert observe(match, 0).known[1][2:4] == (None, 33)
    match.apply(Move.place(1, 3))
    assert observe(match, 0).known[1] == (None,) * 10


def test_everyone_sees_the_whole_discard_pile_and_each_seats_discards(stacked: Stacked) -> None:
    match = stacked(racks={1: WINNING}, discard=40, stock=[2])
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.place(1, 0, go_out=False))
    view = observe(match, 0)
    assert view.discard == (40, 1)
    assert view.discarded == ((), (1,))
    assert view.stock_count == 19 - 1


def _exhaust(match: Match) -> None:
    while match.stock:
        match.apply(Move.draw(match.turn, "stock"))
        match.apply(Move.throw(match.turn, go_out=False))
    match.apply(Move.draw(match.turn, "stock"))


def test_the_stock_order_is_public_after_an_unshuffled_recycle(stacked: Stacked) -> None:
    match = stacked()
    assert observe(match, 0).stock_known is None
    _exhaust(match)
    assert match.recycles == 1
    for seat in (0, 1):
        assert observe(match, seat).stock_known == tuple(match.stock)


def test_the_stock_order_stays_hidden_after_a_reshuffled_recycle() -> None:
    match = Match(Rules(reshuffle_on_recycle=True), SEED)
    _exhaust(match)
    assert match.recycles == 1
    assert observe(match, 0).stock_known is None
    assert observe(match, 0).stock_count == len(match.stock)


def test_visible_center_shows_index_4_of_every_rack(stacked: Stacked) -> None:
    match = stacked(Rules(players=3, visible_center=True), racks={1: WINNING}, stock=[50])
    view = observe(match, 0)
    assert view.center == tuple(rack[4] for rack in match.racks)
    assert view.center[1] == 9
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.place(1, 4))
    assert observe(match, 2).center[1] == 50


def test_without_visible_center_no_center_is_shown(stacked: Stacked) -> None:
    assert observe(stacked(), 0).center == ()


def test_racks_are_revealed_when_the_round_is_over(stacked: Stacked) -> None:
    match = stacked(Rules(target=1000), racks={1: WINNING})
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.throw(1))
    view = observe(match, 0)
    assert view.phase == "round_over"
    assert view.racks == tuple(tuple(r) for r in match.racks)
    assert view.seed is None


def test_the_seed_is_revealed_only_when_the_match_is_over() -> None:
    match = Match(Rules(target=50, max_recycles=0), SEED)
    assert observe(match, 0).commitment == match.commitment
    while match.phase != "match_over":
        assert observe(match, match.turn).seed is None
        move = match.legal_moves()[0]
        match.apply(Move.throw(move.seat, go_out=False) if match.phase == "resolve" else move)
    assert observe(match, 0).seed == SEED.hex()
    assert observe(match, 1).winner == match.winner


def test_a_view_offers_the_legal_moves_of_its_seat_only_on_its_turn(stacked: Stacked) -> None:
    match = stacked(Rules(repair_token=True))
    assert observe(match, 1).my_turn
    assert observe(match, 1).legal_moves() == match.legal_moves()
    assert observe(match, 0).legal_moves() == ()
    match.apply(Move.draw(1, "stock"))
    assert observe(match, 1).legal_moves() == match.legal_moves()
    assert not observe(match, 0).my_turn


def test_a_view_round_trips_through_json(stacked: Stacked) -> None:
    match = stacked(Rules(players=3, visible_center=True, repair_token=True), discard=33)
    match.apply(Move.draw(1, "discard"))
    match.apply(Move.place(1, 2))
    view = observe(match, 0)
    data = json.loads(json.dumps(view.to_dict()))
    assert View.from_dict(data) == view
    assert data["rules"]["players"] == 3
    assert data["known"][1][2] == 33


def test_a_view_of_a_finished_round_round_trips_through_json(stacked: Stacked) -> None:
    match = stacked(Rules(target=1000), racks={1: WINNING})
    match.apply(Move.draw(1, "stock"))
    match.apply(Move.throw(1))
    view = observe(match, 1)
    assert View.from_dict(json.loads(json.dumps(view.to_dict()))) == view


def test_from_dict_refuses_what_is_not_a_view() -> None:
    with pytest.raises(RackError):
        View.from_dict({"seat": 0})


@pytest.mark.parametrize("seat", [-2, 2, 4])
def test_observe_refuses_a_seat_that_is_not_at_the_table(stacked: Stacked, seat: int) -> None:
    with pytest.raises(RackError):
        observe(stacked(), seat)


def test_the_json_shape_of_a_view_is_pinned(stacked: Stacked) -> None:
    rules = Rules(repair_token=True, visible_center=True)
    match = stacked(rules, racks={1: [1, 3, 5, 7, 9, 11, 13, 15, 17, 19]}, discard=33, stock=[40])
    match.apply(Move.draw(1, "discard"))
    match.apply(Move.place(1, 2))
    match.apply(Move.draw(0, "stock"))
    data = observe(match, 0).to_dict()
    assert list(data) == [f for f in View.__dataclass_fields__]
    assert data == {
        "seat": 0,
        "rules": rules.to_dict(full=True),
        "round_no": 1,
        "dealer": 0,
        "turn": 0,
        "phase": "resolve",
        "rack": [20, 2, 18, 4, 16, 6, 14, 8, 12, 10],
        "held": 40,
        "held_from": "stock",
        "discard": [5],
        "stock_count": 18,
        "stock_known": None,
        "recycles": 0,
        "scores": [0, 0],
        "rounds": [],
        "turns_taken": [0, 1],
        "repair_tokens": [True, True],
        "center": [16, 9],
        "last_pickup": [None, 33],
        "pickups": [[], [33]],
        "discarded": [[], [5]],
        "known": [[None] * 10, [None, None, 33, *[None] * 7]],
        "commitment": None,
        "moves": 3,
        "racks": None,
        "winner": None,
        "seed": None,
    }


def _plain(value: object) -> object:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _reference_to_dict(view: View) -> dict[str, object]:
    """The JSON of a view by the plain rule: every tuple becomes a list, at any depth."""
    out: dict[str, object] = {}
    for name in View.__dataclass_fields__:
        value = getattr(view, name)
        if name == "rules":
            value = view.rules.to_dict(full=True)
        elif name == "rounds":
            value = [r.to_dict() for r in view.rounds]
        out[name] = _plain(value)
    return out


def test_to_dict_turns_every_tuple_into_a_list_over_a_whole_match() -> None:
    rules = Rules(players=3, visible_center=True, repair_token=True, target=50, turn_cap=50)
    match, rnd = Match(rules, SEED), random.Random(5)
    while match.phase != "match_over":
        for seat in range(3):
            view = observe(match, seat)
            data = view.to_dict()
            assert data == _reference_to_dict(view)
            assert list(data) == list(_reference_to_dict(view))
        legal = match.legal_moves()
        match.apply(legal[rnd.randrange(len(legal))])
    assert len(match.rounds) > 1
