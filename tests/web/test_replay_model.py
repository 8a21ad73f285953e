"""The replay viewer's steps (js/replay-model.js), run in Chromium, against rackcore.

Matches over many rules variants, played by random legal moves (so turnovers of the
discard pile, rounds ended by an empty stock or the turn limit, repairs and kept
winning racks all happen): every step the page would show holds the table rackcore
has at that point, and the words for each move name what happened.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from typing import Any

import pytest
from playwright.sync_api import Page

from rackcore import Match, Move, Rules, is_winning, match_from_log, observe, to_log
from rackcore.bots import choose

pytestmark = pytest.mark.browser


def build(page: Page, log: Any) -> Any:
    """``buildReplay(log)`` in the page: its frames, or the refusal's message."""
    return page.evaluate(
        """async (log) => {
            const model = await import('/js/replay-model.js');
            try {
              const replay = await model.buildReplay(log);
              return { frames: replay.frames, finished: replay.report.finished };
            } catch (exc) {
              if (exc instanceof model.ReplayRefused) return { refused: exc.message };
              throw exc;
            }
        }""",
        log,
    )


def played_match(rng: random.Random, options: dict[str, Any], wild: float) -> dict[str, Any]:
    """A match of the easy bot, with a random legal move a ``wild`` share of the time and
    now and then a winning rack kept (``go_out: false``)."""
    match = Match(Rules(**options), seed=rng.randbytes(32))
    while match.outcome() is None:
        if match.phase == "round_over" or rng.random() < wild:
            move = rng.choice(match.legal_moves())
        else:
            move = choose(observe(match, match.turn), level="easy", seed=rng.randrange(1000))
        if move.act in ("place", "throw") and rng.random() < 0.3:
            move = replace(move, go_out=False)
        match.apply(move)
    log = to_log(match)
    for move in log["moves"]:
        move["by"] = rng.choice(["human", "bot", "cover"])
    return log


@pytest.fixture(scope="module")
def logs() -> list[dict[str, Any]]:
    rng = random.Random(19)
    variants: list[tuple[dict[str, Any], float]] = [
        ({"players": 2, "target": 50, "max_recycles": 0, "turn_cap": 50}, 0.4),
        ({"players": 3, "target": 50, "repair_token": True, "bonus": True, "turn_cap": 50}, 0.2),
        ({"players": 4, "target": 50, "partners": True, "reshuffle_on_recycle": True}, 0.1),
        ({"players": 2, "target": 50, "descending": True, "max_recycles": 1, "turn_cap": 50}, 0.6),
    ]
    return [played_match(rng, options, wild) for options, wild in variants]


def table(match: Match) -> dict[str, Any]:
    return {
        "round": match.round_no,
        "dealer": match.dealer,
        "racks": [list(r) for r in match.racks],
        "discard": list(match.discard),
        "stock": len(match.stock),
        "held": match.held,
        "heldFrom": match.held_from,
        "turn": match.turn,
        "phase": match.phase,
        "scores": list(match.scores),
        "recycles": match.recycles,
        "winner": match.winner,
    }


def test_the_steps_of_many_matches_agree_with_rackcore(
    js: Page, logs: list[dict[str, Any]]
) -> None:
    seen: set[str] = set()
    for log in logs:
        got = build(js, log)
        assert "frames" in got, got
        frames = got["frames"]
        assert got["finished"]
        match = match_from_log(log)
        rules = match.rules
        at = 0
        for frame in frames:
            if frame["kind"] == "deal":
                if match.phase == "round_over":
                    match.next_round()
                assert frame["moveNo"] == at
                assert frame["text"] == f"Round {match.round_no} dealt"
            else:
                data = log["moves"][at]
                before = (len(match.rounds), match.recycles)
                match.apply(Move.from_dict(data))
                at += 1
                assert frame["moveNo"] == at
                assert (frame["seat"], frame["by"], frame["act"]) == (
                    data["seat"],
                    data["by"],
                    data["act"],
                )
                text = frame["text"]
                ended = len(match.rounds) > before[0]
                if data["act"] == "repair":
                    seen.add("repair")
                    assert text.startswith("used the repair token: swapped slots")
                elif data["act"] == "draw" and data["from"] == "stock" and ended:
                    seen.add("empty stock")
                    assert "the round ends with no winner" in text
                elif data["act"] == "draw" and match.recycles > before[1]:
                    seen.add("turnover")
                    assert "turned over into a new stock" in text
                    assert text.endswith(f"drew {match.held}")
                elif data["act"] in ("place", "throw") and ended:
                    out = match.rounds[-1].winner
                    seen.add("went out" if out is not None else "turn limit")
                    assert text.endswith("and went out!" if out is not None else "no winner")
                    assert frame["ended"]["points"] == list(match.rounds[-1].points)
                elif data["act"] in ("place", "throw") and not data.get("go_out", True):
                    rack = match.racks[data["seat"]]
                    if is_winning(rack, rules.run_needed, rules.descending):
                        seen.add("kept")
                        assert text.endswith("kept playing instead of going out")
            want = table(match)
            assert {key: frame[key] for key in want} == want, (at, frame["kind"])
        assert at == len(log["moves"])
        assert frames[-1]["phase"] == "match_over"
    assert seen >= {"repair", "turnover", "went out", "turn limit", "kept", "empty stock"}, seen


def test_a_log_that_does_not_verify_builds_no_steps(js: Page, logs: list[dict[str, Any]]) -> None:
    log = logs[0]
    bad = json.loads(json.dumps(log))
    bad["moves"][3] = {"seat": (bad["moves"][3]["seat"] + 1) % 2, "act": "throw"}
    got = build(js, bad)
    assert got["refused"].startswith("This match log does not verify, so it cannot be replayed:")
    assert "move 4 is wrong" in got["refused"]
    assert build(js, {"format": "rackem-match/1"})["refused"] == (
        'This is not a valid match log: a log needs a "moves" list.'
    )
