"""``review(log, seat)``: each decision judged from that seat's view only, and the summary."""

from __future__ import annotations

import hashlib
import json
import typing
from collections.abc import Callable
from typing import Any

import pytest

from rackcore import LogError, Match, Move, RackError, Rules, View, observe, to_log
from rackcore.bots import Assessment, assess, choose
from rackcore.review import FORMAT, Decision, Judge, Review, mark_for, review

Stacked = Callable[..., Match]


def _played_log(rules: Rules, levels: tuple[str, ...], name: str) -> dict[str, Any]:
    """A finished match between bots (``by`` recorded), as a log with the seed revealed.

    A ``thrower`` seat draws from the stock and throws the card: the stock runs out.
    """
    match = Match(rules, hashlib.sha256(f"test_review/{name}".encode()).digest())
    while match.outcome() is None:
        if match.phase == "round_over":
            match.next_round()
        seat = match.turn
        if levels[seat] == "thrower":
            move = Move.draw(seat, "stock") if match.phase == "draw" else Move.throw(seat)
        else:
            move = choose(observe(match, seat), levels[seat], 7)
        match.apply(move.with_by("bot"))
    return to_log(match)


# -- the proof: the judge sees views, and no hidden card --------------------------


def _cards(view: View) -> set[int]:
    """Every card value anywhere in ``view``."""
    found: set[int] = set()

    def walk(value: Any) -> None:
        if isinstance(value, tuple):
            for v in value:
                walk(v)
        elif type(value) is int:
            found.add(value)

    for name in ("rack", "held", "discard", "stock_known", "center", "last_pickup"):
        walk(getattr(view, name))
    for name in ("pickups", "discarded", "known", "racks"):
        walk(getattr(view, name))
    return found


class _Recorder:
    """A judge that records exactly what it is handed, then judges as ``assess`` does."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Assessment:
        self.calls.append((args, kwargs))
        return assess(*args, **kwargs)


@pytest.mark.parametrize(
    ("rules", "levels"),
    [
        (Rules(target=200), ("hard", "medium")),
        (Rules(players=3, target=100, visible_center=True), ("thrower", "medium", "thrower")),
        (Rules(players=3, target=100, reshuffle_on_recycle=True), ("thrower", "hard", "thrower")),
    ],
    ids=["2 players", "3 players, visible center, recycles", "3 players, shuffled recycles"],
)
def test_the_judge_gets_the_seats_views_and_no_card_it_could_not_see(
    rules: Rules, levels: tuple[str, ...]
) -> None:
    log = _played_log(rules, levels, f"proof/{rules.players}")
    seat = 1
    recorder = _Recorder()
    result = review(log, seat, judge=recorder)
    # An independent replay walks the match and keeps what the seat has seen: its own
    # dealt rack, the first face-up card, its own stock draws, every discarded card and
    # (with visible_center) the other racks' centre cards. That is all it may know.
    match = Match(rules, bytes.fromhex(log["seed"]))
    seen: set[int] = set()
    round_no, checked, recycled = 0, 0, 0
    for at, data in enumerate(log["moves"]):
        move = Move.from_dict(data)
        if match.phase == "round_over":
            match.next_round()
        if match.round_no != round_no:  # a new deal
            round_no, seen = match.round_no, set(match.racks[seat]) | {match.discard[0]}
        if rules.visible_center:
            seen |= {rack[4] for rack in match.racks}
        if move.seat == seat:
            assert len(match.history) == at
            args, kwargs = recorder.calls[checked]
            assert kwargs == {} and len(args) == 1
            view = args[0]
            assert type(view) is View  # a view, never the match
            assert view == observe(match, seat)  # rackcore's own redaction, nothing more
            assert view.racks is None and view.seed is None
            assert (view.stock_known is not None) == match.stock_public
            assert _cards(view) <= seen, (at, _cards(view) - seen)
            others = {c for s, rack in enumerate(match.racks) if s != seat for c in rack}
            assert others - seen  # there were hidden cards to leak
            checked += 1
            recycled += match.recycles > 0
        match.apply(move)
        if move.act == "draw" and move.seat == seat and match.held is not None:
            seen.add(match.held)
        if move.act in ("place", "throw"):
            seen.add(match.discard[-1])
    assert checked == len(recorder.calls) == len(result.decisions) > 30
    assert (recycled > 0) == ("thrower" in levels)  # views after the pile turned over too


def test_the_judges_type_takes_a_view_only() -> None:
    hints = typing.get_type_hints(review)
    assert hints["judge"] == Judge == Callable[[View], Assessment]
    assert typing.get_type_hints(assess) == {"view": View, "return": Assessment}


# -- known positions --------------------------------------------------------------

# Seat 0 moves first (dealer 1). Slot 9 holds 9, below 14: any card above 14 there goes
# out (the run 1, 2, 3 is in place). The stock's first card is 16.
ALMOST = [1, 2, 3, 5, 6, 8, 10, 12, 14, 9]


def _almost(stacked: Stacked, resolve: Move) -> dict[str, Any]:
    match = stacked(Rules(players=2), dealer=1, racks={0: ALMOST}, discard=7, stock=[16])
    match.apply(Move.draw(0, "stock").with_by("human"))
    match.apply(resolve.with_by("human"))
    return to_log(match)


def test_throwing_away_the_card_that_goes_out_is_a_blunder(stacked: Stacked) -> None:
    result = review(_almost(stacked, Move.throw(0)), 0)
    draw, throw = result.decisions
    assert (draw.kind, draw.mark, draw.cost, draw.best) == ("draw", "best", 0.0, draw.played)
    assert throw.kind == "resolve" and throw.mark == "blunder"
    assert throw.best == Move.place(0, 9)
    assert throw.cost > 1.0
    assert (throw.at, throw.round, throw.turn, throw.by) == (1, 1, 1, "human")
    assert result.costliest == (1,)
    assert result.accuracy == 50.0


def test_going_out_is_the_best_move(stacked: Stacked) -> None:
    result = review(_almost(stacked, Move.place(0, 9)), 0)
    assert [d.mark for d in result.decisions] == ["best", "best"]
    assert result.costliest == () and result.accuracy == 100.0


def test_the_hard_players_own_moves_are_all_best() -> None:
    log = _played_log(Rules(target=150), ("hard", "medium"), "hard-own")
    assert {d.mark for d in review(log, 0).decisions} == {"best"}
    assert review(log, 1).to_dict()["summary"]["decisions"] > 20


# -- the summary and the JSON form ------------------------------------------------


def _decision(cost: float, at: int = 0) -> Decision:
    move = Move.draw(0, "stock")
    return Decision(at, 1, 1, None, "draw", move, move, cost, mark_for(cost), (), None)


def test_marks_follow_the_thresholds() -> None:
    costs = [0.0, 0.01, 0.011, 0.03, 0.031, 0.1, 0.11, 0.3, 0.31, 20.0]
    assert [mark_for(c) for c in costs] == [
        "best",
        "best",
        "good",
        "good",
        "inaccuracy",
        "inaccuracy",
        "mistake",
        "mistake",
        "blunder",
        "blunder",
    ]


def test_the_summary_counts_marks_accuracy_and_the_costliest() -> None:
    costs = [0.0, 0.2, 0.02, 2.0, 0.2, 0.0, 0.05, 2.0]
    result = Review(1, tuple(_decision(c, at) for at, c in enumerate(costs)))
    assert result.marks == {"best": 2, "good": 1, "inaccuracy": 1, "mistake": 2, "blunder": 2}
    assert result.accuracy == 100.0 * 3 / 8
    assert result.costliest == (3, 7, 1)  # ties: the earlier decision first
    assert Review(0, ()).accuracy == 100.0 and Review(0, ()).costliest == ()
    assert Review(0, (_decision(0.0),)).costliest == ()


def test_the_json_form(stacked: Stacked) -> None:
    data = review(_almost(stacked, Move.throw(0)), 0).to_dict()
    assert json.loads(json.dumps(data)) == data
    cost = data["decisions"][1]["cost"]
    assert cost == round(cost, 2) > 1.0
    assert data == {
        "format": FORMAT,
        "seat": 0,
        "decisions": [
            {
                "at": 0,
                "round": 1,
                "turn": 1,
                "by": "human",
                "kind": "draw",
                "played": {"act": "draw", "from": "stock"},
                "best": {"act": "draw", "from": "stock"},
                "cost": 0.0,
                "mark": "best",
            },
            {
                "at": 1,
                "round": 1,
                "turn": 1,
                "by": "human",
                "kind": "resolve",
                "played": {"act": "throw"},
                "best": {"act": "place", "slot": 9},
                "cost": cost,
                "mark": "blunder",
            },
        ],
        "summary": {
            "decisions": 2,
            "accuracy": 50.0,
            "marks": {"best": 1, "good": 0, "inaccuracy": 0, "mistake": 0, "blunder": 1},
            "costliest": [1],
        },
    }
    assert FORMAT == "rackem-review/1"


# -- what is refused --------------------------------------------------------------


def test_a_running_match_is_refused() -> None:
    match = Match(Rules(), bytes(32))
    match.apply(Move.draw(match.turn, "stock"))
    log = to_log(match)
    assert "seed" not in log and "commitment" in log
    with pytest.raises(LogError, match="seed is not revealed"):
        review(log, 0)


def test_a_seat_not_at_the_table_is_refused(stacked: Stacked) -> None:
    with pytest.raises(RackError, match="no seat 2"):
        review(_almost(stacked, Move.throw(0)), 2)


def test_a_log_that_does_not_replay_is_refused(stacked: Stacked) -> None:
    log = _almost(stacked, Move.throw(0))
    log["moves"].append({"seat": 0, "act": "draw", "from": "stock"})  # seat 1's turn
    with pytest.raises(LogError, match="move 2 does not replay"):
        review(log, 0)
