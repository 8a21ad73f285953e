"""The bots' public surface: legal moves under every option, determinism, refusals."""

from __future__ import annotations

import hashlib
import random
from typing import Any

import pytest

import rackcore.bots
from rackcore import Match, Move, Rules, View, observe
from rackcore.bots import LEVELS, RETIRED, bot_for, choose

# Every rules option, alone and mixed, with each player count.
RULES: list[dict[str, Any]] = [
    {"players": 2},
    {"players": 3},
    {"players": 4},
    {"players": 4, "partners": True},
    {"players": 2, "descending": True},
    {"players": 3, "descending": True, "run_to_go_out": 3},
    {"players": 2, "run_to_go_out": 0},
    {"players": 2, "run_to_go_out": 5},
    {"players": 2, "repair_token": True},
    {"players": 4, "repair_token": True, "partners": True, "descending": True},
    {"players": 3, "visible_center": True},
    {"players": 2, "visible_center": True, "repair_token": True, "bonus": True},
    {"players": 2, "reshuffle_on_recycle": True, "max_recycles": 1},
    {"players": 2, "max_recycles": 0},
    {"players": 3, "bonus": True, "run_to_go_out": 2},
    {"players": 4, "bonus": True, "visible_center": True, "reshuffle_on_recycle": True},
    {"players": 2, "turn_cap": 50, "tiebreak": "extra_round"},
]
PLAYERS = ("easy", "medium", "hard", "hard-2025", "random", "random")


def _seed(*parts: object) -> bytes:
    return hashlib.sha256("/".join(map(str, parts)).encode()).digest()


def _drive(options: dict[str, Any], game: int, decisions: int) -> int:
    """Play with a random mix of bots and random movers; check every bot move. Returns
    how many bot moves were checked."""
    rng = random.Random(f"{options}/{game}")
    rules = Rules.from_dict({**options, "target": 1000})
    match = Match(rules, _seed("legal", options, game))
    seats = [rng.choice(PLAYERS) for _ in range(rules.players)]
    seats[rng.randrange(rules.players)] = LEVELS[game % len(LEVELS)]
    checked = 0
    while decisions > 0 and match.outcome() is None:
        if match.phase == "round_over":
            match.next_round()
        seat = match.turn
        view = observe(match, seat)
        legal = view.legal_moves()
        assert set(legal) == set(match.legal_moves())
        if seats[seat] == "random":
            move = rng.choice(legal)
        else:
            move = choose(view, seats[seat], seed=game)
            assert move in legal, (seats[seat], move, options)
            checked += 1
            decisions -= 1
        match.apply(move)
    return checked


@pytest.mark.parametrize("options", RULES, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_every_bot_move_is_legal_under_every_option(options: dict[str, Any]) -> None:
    checked = sum(_drive(options, game, 40) for game in range(4))
    assert checked >= 120


def test_levels_are_easy_medium_hard() -> None:
    assert LEVELS == ("easy", "medium", "hard")
    for level in LEVELS:
        assert bot_for(level).level == level


def test_retired_levels_are_reachable_for_measurements_but_not_offered() -> None:
    assert RETIRED == ("hard-2025",)
    assert not set(RETIRED) & set(LEVELS)
    for level in RETIRED:
        assert bot_for(level).level == level


def test_the_public_surface_is_pinned() -> None:
    assert sorted(rackcore.bots.__all__) == [
        "Assessment",
        "Bot",
        "Easy",
        "Hard",
        "HardParams",
        "LEVELS",
        "Medium",
        "RETIRED",
        "assess",
        "bot_for",
        "choose",
    ]


def _positions(count: int) -> list[View]:
    """Views at the seat to move, from a few matches played by medium bots."""
    views: list[View] = []
    for game in range(count):
        rules = Rules(players=2 + game % 3, repair_token=game % 2 == 0)
        match = Match(rules, _seed("positions", game))
        for _ in range(17 + 3 * game):
            view = observe(match, match.turn)
            match.apply(choose(view, "medium", seed=1))
            if match.phase != "draw" and match.phase != "resolve":
                break
        views.append(observe(match, match.turn))
    return views


@pytest.mark.parametrize("level", LEVELS)
def test_a_bot_is_a_pure_function_of_view_level_and_seed(level: str) -> None:
    for view in _positions(6):
        if not view.my_turn:
            continue
        move = choose(view, level, seed=7)
        assert choose(view, level, seed=7) == move
        assert choose(View.from_dict(view.to_dict()), level, seed=7) == move


def test_easy_and_medium_use_their_seed_and_hard_needs_none() -> None:
    views = [v for v in _positions(8) if v.my_turn]
    for level in ("easy", "medium"):
        assert len({tuple(choose(v, level, seed=s) for v in views) for s in range(6)}) > 1
    assert len({tuple(choose(v, "hard", seed=s) for v in views) for s in range(3)}) == 1


def test_an_unknown_level_is_refused() -> None:
    view = observe(Match(Rules(), _seed("refuse")), 0)
    view = observe(Match(Rules(), _seed("refuse")), view.turn)
    with pytest.raises(ValueError, match="unknown bot level"):
        choose(view, "grandmaster")


def test_a_bot_refuses_to_move_out_of_turn() -> None:
    match = Match(Rules(), _seed("turn"))
    other = observe(match, (match.turn + 1) % 2)
    with pytest.raises(ValueError, match="not seat"):
        choose(other, "hard")


def test_a_bot_leaves_the_by_field_to_its_caller() -> None:
    match = Match(Rules(), _seed("by"))
    move = choose(observe(match, match.turn), "hard")
    assert isinstance(move, Move)
    assert move.by is None
