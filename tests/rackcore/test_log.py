"""The ``rackem-match/1`` log: writing, replaying, verifying (docs/rules.md, *Match log*)."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rackcore import (
    FORMAT,
    LogError,
    Match,
    Move,
    Rules,
    deck_for_round,
    first_dealer,
    match_from_log,
    replay,
    to_log,
    verify,
)

SEED = bytes(31) + b"\x01"


def _played(rules: Rules, seed: bytes = SEED, moves: int | None = None) -> Match:
    """A match played with random legal moves, to its end or for ``moves`` moves."""
    match, rnd = Match(rules, seed), random.Random(7)
    while match.phase != "match_over" and (moves is None or len(match.history) < moves):
        legal = match.legal_moves()
        match.apply(legal[rnd.randrange(len(legal))])
    return match


def _finished_log() -> dict[str, Any]:
    return to_log(_played(Rules(target=60, max_recycles=1)))


def test_a_running_match_logs_its_commitment_but_not_its_seed() -> None:
    match = _played(Rules(players=3, bonus=True), moves=6)
    log = to_log(match)
    assert log["format"] == FORMAT == "rackem-match/1"
    assert log["rules"] == {"players": 3, "bonus": True}
    assert log["commitment"] == match.commitment
    assert "seed" not in log
    assert SEED.hex() not in json.dumps(log)
    assert log["moves"] == [m.to_dict() for m in match.history]
    assert log["result"]["winner"] is None


def test_a_finished_match_reveals_its_seed() -> None:
    log = _finished_log()
    assert log["seed"] == SEED.hex()
    assert log["result"]["winner"] is not None
    assert len(log["result"]["rounds"]) >= 1


def test_reveal_can_be_forced_for_a_running_match() -> None:
    assert to_log(_played(Rules(), moves=4), reveal=True)["seed"] == SEED.hex()


def test_a_stacked_match_logs_its_decks_and_first_dealer() -> None:
    deck = list(range(40, 0, -1))
    match = Match(Rules(), decks=[deck], dealer=1)
    log = to_log(match)
    assert log["decks"] == [deck]
    assert log["first_dealer"] == 1
    assert "seed" not in log and "commitment" not in log
    log["decks"][0].reverse()
    assert match.decks == [deck]


def test_replay_rebuilds_the_match() -> None:
    match = _played(Rules(players=4, partners=True, repair_token=True, target=80))
    again = replay(json.loads(json.dumps(to_log(match))))
    assert again.history == match.history
    assert again.scores == match.scores
    assert again.rounds == match.rounds
    assert again.racks == match.racks
    assert again.outcome() == match.outcome()


def test_match_from_log_deals_the_first_round_without_moves() -> None:
    log = _finished_log()
    fresh = match_from_log(log)
    assert fresh.history == []
    assert fresh.racks == Match(Rules(target=60, max_recycles=1), SEED).racks


def test_verify_accepts_an_honest_log() -> None:
    log = _finished_log()
    verdict = verify(json.loads(json.dumps(log)))
    assert verdict["valid"] is True
    assert verdict["finished"] is True
    assert verdict["scores"] == log["result"]["scores"]
    assert verdict["winner"] == log["result"]["winner"]


def test_verify_accepts_a_running_match_with_its_seed_shown() -> None:
    verdict = verify(to_log(_played(Rules(), moves=9), reveal=True))
    assert verdict["valid"] is True
    assert verdict["finished"] is False
    assert verdict["winner"] is None


def test_verify_ignores_who_decided_a_move() -> None:
    match = _played(Rules(target=60), moves=10)
    for i, move in enumerate(match.history):
        match.history[i] = move.with_by(("human", "bot", "cover")[i % 3])
    log = to_log(match, reveal=True)
    assert log["moves"][2]["by"] == "cover"
    assert verify(log)["valid"] is True


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ({"seat": 1, "act": "throw"}, "illegal_move"),
        ({"seat": 0, "act": "draw", "from": "stock"}, "not_your_turn"),
        ({"seat": 1, "act": "draw", "from": "pile"}, "malformed_move"),
        ({"seat": 1, "act": "draw", "from": "stock", "card": 5}, "malformed_move"),
        ("draw", "malformed_move"),
    ],
)
def test_verify_names_the_first_bad_move(bad: Any, reason: str) -> None:
    log = to_log(_played(Rules(), moves=12), reveal=True)
    assert log["moves"][4] == {"seat": 1, "act": "draw", "from": "stock"}
    log["moves"][4] = bad
    log["moves"][7] = {"seat": 3, "act": "throw"}
    verdict = verify(log)
    assert verdict["valid"] is False
    assert verdict["error"]["move_index"] == 4
    assert verdict["error"]["reason"].startswith(reason)


def test_verify_names_a_move_after_the_end_of_the_match() -> None:
    log = _finished_log()
    log["moves"].append({"seat": 0, "act": "draw", "from": "stock"})
    verdict = verify(log)
    assert verdict["error"]["move_index"] == len(log["moves"]) - 1
    assert verdict["error"]["reason"].startswith("match_over")


@pytest.mark.parametrize(
    ("key", "wrong"),
    [("scores", [0, 0]), ("winner", None), ("rounds", []), ("winner", 7)],
)
def test_verify_rejects_a_wrong_claimed_result(key: str, wrong: Any) -> None:
    log = _finished_log()
    assert log["result"][key] != wrong
    log["result"][key] = wrong
    verdict = verify(log)
    assert verdict["valid"] is False
    assert verdict["error"]["move_index"] is None
    assert key in verdict["error"]["reason"]


def test_verify_rejects_a_result_that_is_not_an_object() -> None:
    log = _finished_log()
    log["result"] = [1, 2]
    assert verify(log)["valid"] is False


def test_verify_rejects_a_seed_that_does_not_match_the_commitment() -> None:
    log = _finished_log()
    log["commitment"] = "0" * 64
    verdict = verify(log)
    assert verdict["valid"] is False
    assert "commitment" in verdict["error"]["reason"]


def test_a_stacked_log_of_the_seeds_decks_verifies_to_the_same_result() -> None:
    rules = Rules(players=3, target=70, max_recycles=1)
    log = to_log(_played(rules))
    rounds = len(log["result"]["rounds"])
    stacked = {
        "format": FORMAT,
        "rules": log["rules"],
        "decks": [deck_for_round(SEED, r, rules.deck_size) for r in range(1, rounds + 1)],
        "first_dealer": first_dealer(SEED, rules.players),
        "moves": log["moves"],
        "result": log["result"],
    }
    assert verify(stacked) == verify(log)
    assert verify(stacked)["valid"] is True


def test_a_stacked_log_without_the_next_rounds_deck_is_invalid_at_that_move() -> None:
    match = Match(Rules(target=1000, max_recycles=0), decks=[list(range(1, 41))], dealer=0)
    while match.phase != "round_over":
        legal = match.legal_moves()
        match.apply(legal[0] if match.phase == "draw" else Move.throw(match.turn, go_out=False))
    log = to_log(match)
    log["moves"].append({"seat": match.turn, "act": "draw", "from": "stock"})
    verdict = verify(log)
    assert verdict["error"]["move_index"] == len(log["moves"]) - 1
    assert "round 2" in verdict["error"]["reason"]


def _malformed_logs() -> list[Any]:
    base = {"format": FORMAT, "rules": {"players": 2}, "seed": SEED.hex(), "moves": []}
    stacked = {"format": FORMAT, "decks": [list(range(1, 41))], "first_dealer": 0, "moves": []}
    cases: list[Any] = [[], "log", None]
    changes: tuple[dict[str, Any], ...] = (
        {"format": "rackem-match/2"},
        {"format": None},
        {"rules": {"players": 7}},
        {"rules": {"players": 2, "jokers": True}},
        {"rules": "standard"},
        {"moves": None},
        {"moves": {"0": {}}},
        {"seed": "00" * 31},
        {"seed": "zz" * 32},
        {"seed": 1},
        {"extra": True},
        {"decks": [list(range(1, 41))]},
        {"first_dealer": 0},
    )
    cases += [{**base, **change} for change in changes]
    without_format = dict(base)
    del without_format["format"]
    without_seed = dict(base)
    del without_seed["seed"]
    cases += [without_format, without_seed]
    changes = (
        {"rules": {"players": 2, "reshuffle_on_recycle": True}},
        {"decks": [list(range(1, 40))]},
        {"decks": [[*range(1, 40), 39]]},
        {"decks": [list(range(1, 41)), list(range(2, 42))]},
        {"decks": [["1"] * 40]},
        {"decks": "1 2 3"},
        {"first_dealer": 2},
        {"first_dealer": None},
    )
    cases += [{**stacked, **change} for change in changes]
    return cases


@pytest.mark.parametrize("log", _malformed_logs())
def test_what_is_not_a_well_formed_log_raises_a_log_error(log: Any) -> None:
    with pytest.raises(LogError):
        verify(copy.deepcopy(log))
    with pytest.raises(LogError):
        match_from_log(copy.deepcopy(log))


def test_a_full_rules_object_is_accepted() -> None:
    log = _finished_log()
    log["rules"] = Rules(target=60, max_recycles=1).to_dict(full=True)
    assert verify(log)["valid"] is True


def test_the_log_example_shape_from_the_rules_contract_reads_as_a_log() -> None:
    log = {
        "format": "rackem-match/1",
        "rules": {"players": 2, "target": 500, "bonus": False},
        "seed": SEED.hex(),
        "commitment": "ec4916dd28fc4c10d78e287ca5d9cc51ee1ae73cbfde08c6b37324cbfaac8bc5",
        "moves": [
            {"seat": 1, "act": "draw", "from": "stock"},
            {"seat": 1, "act": "place", "slot": 3},
            {"seat": 0, "act": "draw", "from": "discard"},
            {"seat": 0, "act": "place", "slot": 9, "go_out": False},
        ],
        "result": {"scores": [0, 0], "rounds": [], "winner": None},
    }
    verdict = verify(log)
    assert verdict["valid"] is True
    assert replay(log).discard == [9, 20]  # seat 1 swapped 28 for 8, seat 0 took 28 for 20


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 70) | st.sampled_from(["stock", "draw", "00"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=12,
)
_SHORT = to_log(_played(Rules(target=50, max_recycles=0, turn_cap=50)))


@settings(max_examples=150, deadline=None)
@given(
    key=st.sampled_from([*sorted(_SHORT), "decks", "first_dealer"]),
    path=st.lists(st.integers(0, 400), max_size=3),
    value=_JSON,
)
def test_verify_answers_any_damaged_log_with_a_verdict_or_a_log_error(
    key: str, path: list[int], value: Any
) -> None:
    log = copy.deepcopy(_SHORT)
    parent: Any = log
    field: Any = key
    for step in path:
        inner = parent.get(field) if isinstance(parent, dict) else parent[field]
        if isinstance(inner, list) and inner:
            parent, field = inner, step % len(inner)
        elif isinstance(inner, dict) and inner:
            parent, field = inner, sorted(inner)[step % len(inner)]
        else:
            break
    parent[field] = value
    try:
        verdict = verify(log)
    except LogError:
        return
    assert verdict["valid"] in (True, False)
