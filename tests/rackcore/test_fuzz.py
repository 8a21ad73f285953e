"""Random playouts over every combination of options: the invariants hold, every log verifies."""

from __future__ import annotations

import hashlib
import itertools
import json
import random

import pytest

from rackcore import Match, Move, Rules, observe, replay, to_log, verify

TABLES = [(2, False), (3, False), (4, False), (4, True)]  # (players, partners)
SWITCHES = list(itertools.product([False, True], repeat=5))  # bonus ... reshuffle_on_recycle
CASES = [
    (table, switches, tiebreak)
    for table in TABLES
    for switches in SWITCHES
    for tiebreak in ("went_out", "extra_round")
]
MOVE_LIMIT = 20_000


def _ideal_slot(card: int, size: int, descending: bool) -> int:
    slot = (card - 1) * 10 // size
    return 9 - slot if descending else slot


def _choose(match: Match, rnd: random.Random) -> Move:
    """Mostly a sorting player (so rounds are won), sometimes any legal move at all."""
    legal = match.legal_moves()
    if rnd.random() < 0.25 or match.phase != "resolve" or match.held is None:
        return legal[rnd.randrange(len(legal))]
    slot = _ideal_slot(match.held, match.rules.deck_size, match.rules.descending)
    return Move.place(match.turn, slot, go_out=rnd.random() < 0.9)


def _check_invariants(match: Match, before: list[int]) -> None:
    cards = [c for rack in match.racks for c in rack] + match.stock + match.discard
    if match.held is not None:
        cards.append(match.held)
    assert sorted(cards) == list(range(1, match.rules.deck_size + 1))
    assert all(now >= then for now, then in zip(match.scores, before, strict=True))
    assert [sum(r.points[s] for r in match.rounds) for s in range(match.players)] == match.scores
    assert match.phase in ("draw", "resolve", "round_over", "match_over")
    assert (match.held is None) == (match.phase != "resolve")


def _new_match(rules: Rules, index: int, rnd: random.Random) -> Match:
    if index % 2 and not rules.reshuffle_on_recycle:
        decks = []
        for _ in range(60):
            deck = list(range(1, rules.deck_size + 1))
            rnd.shuffle(deck)
            decks.append(deck)
        return Match(rules, decks=decks, dealer=rnd.randrange(rules.players))
    return Match(rules, hashlib.sha256(f"fuzz/{index}".encode()).digest())


@pytest.mark.parametrize(("index", "case"), list(enumerate(CASES)))
def test_a_random_playout_keeps_every_invariant_and_verifies(
    index: int, case: tuple[tuple[int, bool], tuple[bool, ...], str]
) -> None:
    (players, partners), switches, tiebreak = case
    bonus, descending, repair_token, visible_center, reshuffle = switches
    rnd = random.Random(index)
    rules = Rules(
        players=players,
        partners=partners,
        bonus=bonus,
        descending=descending,
        repair_token=repair_token,
        visible_center=visible_center,
        reshuffle_on_recycle=reshuffle,
        tiebreak=tiebreak,
        target=rnd.choice([50, 100, 150]),
        run_to_go_out=rnd.choice([None, 0, 2, 3]),
        max_recycles=index % 4,
        turn_cap=50,
    )
    match = _new_match(rules, index, rnd)
    while match.phase != "match_over":
        assert len(match.history) < MOVE_LIMIT, "the match did not end"
        before = list(match.scores)
        match.apply(_choose(match, rnd))
        _check_invariants(match, before)
        if len(match.history) % 16 == 0:
            for seat in range(players):
                assert len(observe(match, seat).rack) == 10
    assert match.outcome() is not None

    log = to_log(match)
    text = json.dumps(log)
    assert json.loads(text) == log
    verdict = verify(json.loads(text))
    assert verdict["valid"] is True, verdict
    assert verdict["finished"] is True
    assert verdict["scores"] == match.scores
    assert replay(json.loads(text)).rounds == match.rounds
