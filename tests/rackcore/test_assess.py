"""``assess(view)``: the hard player's price of every legal move, and its best is hard's move."""

from __future__ import annotations

import dataclasses
import hashlib
import random
import typing
from collections.abc import Callable, Iterator

import pytest

from rackcore import Match, Move, Rules, View, observe
from rackcore.bots import Assessment, assess, bot_for, choose
from rackcore.bots._assess import STAY_IN_COST

VARIANTS = (
    {},
    {"repair_token": True},
    {"bonus": True, "target": 200},
    {"players": 3},
    {"players": 4, "partners": True, "visible_center": True},
    {"descending": True, "reshuffle_on_recycle": True},
    {"max_recycles": 0},
)
LEVELS = ("hard", "medium", "easy", "medium")


def _views(options: dict[str, object], matches: int = 1) -> Iterator[View]:
    """The view of the seat to move at every decision of short matches of mixed levels."""
    rules = Rules.from_dict({"target": 150, **options})
    for i in range(matches):
        seed = hashlib.sha256(f"test_assess/{options}/{i}".encode()).digest()
        match = Match(rules, seed)
        while match.outcome() is None:
            if match.phase == "round_over":
                match.next_round()
            view = observe(match, match.turn)
            yield view
            match.apply(choose(view, LEVELS[(match.turn + i) % rules.players], i))


def test_the_best_move_is_the_one_hard_plays() -> None:
    hard, seen = bot_for("hard"), {"draw": set(), "resolve": set()}
    decisions = 0
    for options in VARIANTS:
        for view in _views(options):
            judged = assess(view)
            played = hard.choose(view, random.Random(0))
            assert judged.best == played and judged.best.go_out == played.go_out, view
            seen[judged.kind].add(played.source or played.act)
            decisions += 1
    assert decisions > 600
    # Every kind of choice hard makes came up at least once.
    assert seen["draw"] == {"stock", "discard"}
    assert seen["resolve"] == {"place", "throw", "repair"}


def test_every_legal_move_is_priced_and_costs_nothing_only_when_as_good() -> None:
    for options in ({}, {"repair_token": True, "bonus": True, "target": 150}):
        for view in _views(options):
            judged = assess(view)
            legal = set(view.legal_moves())
            assert set(judged.turns) == legal
            assert judged.cost(judged.best) == 0.0
            best = judged.turns[judged.best]
            for move in legal:
                cost = judged.cost(move)
                assert cost == pytest.approx(max(0.0, judged.turns[move] - best))


def test_a_move_played_by_someone_is_priced_like_the_same_move() -> None:
    view = next(_views({}))
    judged = assess(view)
    move = view.legal_moves()[0]
    assert judged.cost(move.with_by("human")) == judged.cost(move)


def test_assess_takes_a_view_and_nothing_else() -> None:
    hints = typing.get_type_hints(assess)
    assert hints == {"view": View, "return": Assessment}


def test_assess_refuses_a_view_whose_seat_is_not_to_move() -> None:
    match = Match(Rules(), bytes(32))
    with pytest.raises(ValueError, match="not seat"):
        assess(observe(match, (match.turn + 1) % 2))


def test_a_draw_prices_the_stock_and_the_discard() -> None:
    match = Match(Rules(), bytes(32))
    judged = assess(observe(match, match.turn))
    assert judged.kind == "draw"
    assert set(judged.turns) == {Move.draw(match.turn, "stock"), Move.draw(match.turn, "discard")}


def _bonus_view(stacked: Callable[..., Match], turns: int) -> View:
    # A winning rack with a run of five (16..20); 15 or 21 would make it six.
    rack = [2, 6, 10, 16, 17, 18, 19, 20, 30, 38]
    match = stacked(Rules(players=2, bonus=True), racks={1: rack}, stock=[40])
    match.apply(Move.draw(1, "stock"))
    return dataclasses.replace(observe(match, 1), turns_taken=(turns, turns))


def test_staying_in_costs_nothing_when_hard_would_stay_in_too(
    stacked: Callable[..., Match],
) -> None:
    view = _bonus_view(stacked, turns=0)
    judged = assess(view)
    assert judged.best == bot_for("hard").choose(view, random.Random(0))
    assert judged.best.go_out is False
    assert judged.cost(dataclasses.replace(judged.best, go_out=True)) == 0.0


def test_staying_in_costs_a_turn_when_hard_would_go_out(stacked: Callable[..., Match]) -> None:
    view = _bonus_view(stacked, turns=14)  # the opponent looks close: go out now
    judged = assess(view)
    assert judged.best.go_out is True
    stay = dataclasses.replace(judged.best, go_out=False)
    assert judged.cost(stay) == pytest.approx(STAY_IN_COST)
