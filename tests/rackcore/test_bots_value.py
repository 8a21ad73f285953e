"""The rack value behind the medium and hard bots (rackcore/bots/_value.py, _pool.py, _board.py)."""

from __future__ import annotations

import random

import pytest

from rackcore import Match, Rules, observe
from rackcore.bots._board import Board
from rackcore.bots._pool import Pool
from rackcore.bots._value import INF, Planner


def _pool(n: int, rack: list[int]) -> Pool:
    return Pool.uniform(n, rack)


def test_a_winning_rack_is_worth_zero_turns() -> None:
    rack = [2, 5, 9, 13, 17, 18, 19, 27, 33, 38]
    assert Planner(rack, _pool(40, rack), run=3).value() == 0.0
    assert Planner(rack, _pool(40, rack), run=0).value() == 0.0


def test_an_increasing_rack_without_the_run_is_not_done() -> None:
    rack = [2, 5, 9, 13, 17, 21, 25, 29, 33, 38]
    assert Planner(rack, _pool(40, rack), run=0).value() == 0.0
    assert Planner(rack, _pool(40, rack), run=3).value() > 0.0


def test_a_card_in_the_right_place_makes_the_rack_better() -> None:
    rack = [3, 30, 9, 14, 20, 22, 26, 31, 35, 39]  # slot 1 is wrong
    pool = _pool(40, rack)
    planner = Planner(rack, pool)
    assert planner.place_cost(6, 1) < planner.cost  # 6 fits between 3 and 9
    assert planner.place_cost(33, 1) >= planner.cost  # 33 does not
    assert planner.place_cost(6, 1) == 0.0  # and it completes the rack


def test_a_shorter_run_wait_makes_a_rack_missing_run_cards_cheaper() -> None:
    rack = [1, 5, 9, 13, 17, 21, 25, 29, 33, 37]  # increasing, no run of 3
    pool = _pool(40, rack)
    assert Planner(rack, pool, 3, 0.7).value() < Planner(rack, pool, 3).value()
    assert Planner(rack, pool, 0, 0.7).value() == Planner(rack, pool, 0).value() == 0.0


def test_a_near_run_is_worth_more_than_scattered_cards() -> None:
    near = [2, 6, 10, 15, 16, 24, 28, 31, 35, 39]  # 15, 16: one card from a run of 3
    far = [2, 6, 10, 14, 19, 24, 28, 31, 35, 39]
    assert Planner(near, _pool(40, near), 3).value() < Planner(far, _pool(40, far), 3).value()


def test_cards_nobody_can_draw_make_a_plan_impossible() -> None:
    rack = [1, 2, 3, 4, 5, 40, 7, 8, 9, 10]
    weight = [0.0] * 42
    assert Planner(rack, Pool(40, weight)).cost == INF


@pytest.mark.parametrize(
    ("run", "run_wait", "plain_weight", "open_floor"),
    [
        (0, 1.0, 0.0, 0.0),
        (3, 1.0, 0.0, 0.0),
        (4, 1.0, 0.0, 0.0),
        (3, 0.7, 0.0, 0.0),
        (3, 0.7, 1.0, 16.0),
        (4, 1.0, 0.5, 9.0),
        (0, 1.0, 1.0, 16.0),
    ],
)
def test_placing_one_card_costs_exactly_what_a_fresh_search_says(
    run: int, run_wait: float, plain_weight: float, open_floor: float
) -> None:
    dials = (run_wait, plain_weight, open_floor)
    rng = random.Random(run)
    for _ in range(15):
        n = rng.choice([40, 50, 60])
        deck = list(range(1, n + 1))
        rng.shuffle(deck)
        rack = deck[:10] if rng.random() < 0.5 else sorted(deck[:10])
        weight = [0.0] + [rng.choice([1.0, 1.0, 0.4, 0.0]) for _ in range(n)] + [0.0]
        for c in rack:
            weight[c] = 0.0
        pool = Pool(n, weight)
        planner = Planner(rack, pool, run, *dials)
        opens = [planner.open_cost(s) for s in range(10)]
        for v in deck[10:15]:
            for s in range(10):
                after = [*rack[:s], v, *rack[s + 1 :]]
                fresh = Planner(after, pool, run, *dials).cost
                assert planner.place_cost(v, s) == pytest.approx(fresh)
                assert planner.place_cost(v, s, opens[s]) == pytest.approx(fresh)


def test_the_fitted_dials_add_the_plain_plan_and_a_floor_per_open_slot() -> None:
    rack = (3, 9, 14, 15, 27, 22, 30, 33, 36, 39)  # 27 out of order; 14, 15 half a run
    pool = _pool(40, rack)
    base = Planner(rack, pool, 3, 0.7)
    plain = Planner(rack, pool, 0, 0.7)
    weighted = Planner(rack, pool, 3, 0.7, plain_weight=1.0)
    assert weighted.value() == pytest.approx(base.value() + plain.value())
    # Slot 5 is open between 16 and 22: five cards fit it, from 30 that may come.
    ordered = (3, 9, 14, 15, 16, 30, 22, 33, 36, 39)
    wait = 30 / 5
    assert Planner(ordered, _pool(40, ordered), 3, 0.7).value() == pytest.approx(wait)
    floored = Planner(ordered, _pool(40, ordered), 3, 0.7, open_floor=16.0)
    assert floored.value() == pytest.approx((wait * wait + 16.0) ** 0.5)
    done = (3, 9, 14, 15, 16, 22, 27, 33, 36, 39)
    assert Planner(done, _pool(40, done), 3, 0.7, 1.0, 16.0).value() == 0.0
    # Without the run rule neither dial applies: hard plays those tables as before.
    assert Planner(rack, pool, 0, 0.7, 1.0, 16.0).value() == plain.value()


def test_the_pool_sums_weights_and_drawable_values_up_to_each_value() -> None:
    pool = Pool(5, [0.0, 1.0, 0.5, 0.0, 1.0, 1.0, 0.0])
    assert pool.cum == [0.0, 1.0, 1.5, 1.5, 2.5, 3.5, 3.5]
    assert pool.avail == [0, 1, 2, 2, 3, 4, 4]
    assert pool.total == 3.5
    with pytest.raises(ValueError, match="indexed"):
        Pool(5, [1.0] * 5)


def test_a_descending_view_reads_as_an_increasing_one() -> None:
    match = Match(Rules(players=2, descending=True), bytes(31) + b"\x01")
    view = observe(match, match.turn)
    board = Board.of(view)
    assert board.rack == tuple(41 - c for c in view.rack)
    assert board.discard == tuple(41 - c for c in view.discard)
    assert board.run == 3


def test_the_unseen_cards_leave_out_everything_this_seat_has_seen() -> None:
    match = Match(Rules(players=3, visible_center=True), bytes(31) + b"\x02")
    view = observe(match, match.turn)
    board = Board.of(view)
    centers = {c for s, c in enumerate(view.center) if s != view.seat}
    assert set(board.unseen).isdisjoint(view.rack)
    assert set(board.unseen).isdisjoint(view.discard)
    assert set(board.unseen).isdisjoint(centers)
    assert len(board.unseen) == 50 - 10 - len(view.discard) - len(centers)


def test_after_an_open_recycle_the_next_stock_card_is_known() -> None:
    rules = Rules(players=2, max_recycles=3)
    match = Match(rules, bytes(31) + b"\x03")
    while match.recycles == 0:  # draw and throw until the stock turns over
        match.apply(match.legal_moves()[0])
        if match.phase == "resolve":
            match.apply(next(m for m in match.legal_moves() if m.act == "throw"))
    view = observe(match, match.turn)
    board = Board.of(view)
    assert view.stock_known is not None
    assert board.stock_next == view.stock_known[0]
    assert board.stock_draws() == (view.stock_known[0],)


def test_after_a_shuffled_recycle_the_stock_holds_only_discarded_cards() -> None:
    rules = Rules(players=2, reshuffle_on_recycle=True)
    match = Match(rules, bytes(31) + b"\x04")
    while match.recycles == 0:
        match.apply(match.legal_moves()[0])
        if match.phase == "resolve":
            match.apply(next(m for m in match.legal_moves() if m.act == "throw"))
    view = observe(match, match.turn)
    board = Board.of(view)
    other = match.racks[1 - view.seat]
    assert view.stock_known is None
    assert board.recycled is not None
    assert set(board.stock_draws()) == set(board.recycled)
    # All but the round's first face-up card, which no seat discarded.
    assert set(board.recycled) <= set(match.stock)
    assert len(set(match.stock) - set(board.recycled)) <= 1
    assert set(board.recycled).isdisjoint(other)
