"""The page's JavaScript port of the rules and the rackem/v1 randomness, run in Chromium.

docs/rules.md's test vectors, and agreement with rackcore (the Python rules) on scoring,
rules options, and verifying whole match logs, valid and tampered.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Any

import pytest
from playwright.sync_api import Page

from rackcore import (
    Match,
    Move,
    Rules,
    RulesError,
    is_winning,
    longest_run,
    scored_length,
    to_log,
    verify,
)

pytestmark = pytest.mark.browser

SEED_ONE = "00" * 31 + "01"


def run(page: Page, body: str, arg: Any = None) -> Any:
    """Evaluate an async function body with the modules imported as rng, rules, verify, sha."""
    return page.evaluate(
        """async ([body, arg]) => {
            const rng = await import('/js/rng.js');
            const rules = await import('/js/rules.js');
            const verify = await import('/js/verify.js');
            const sha = await import('/js/sha256.js');
            return await (new Function('rng', 'rules', 'verify', 'sha', 'arg',
                `return (async () => { ${body} })();`))(rng, rules, verify, sha, arg);
        }""",
        [body, arg],
    )


def test_stream_shuffle_1_starts_with_the_vectors(js: Page) -> None:
    got = run(
        js,
        """const s = new rng.Stream(rng.hexToBytes(arg), 'shuffle/1');
           const out = [];
           for (let i = 0; i < 3; i++) {
             out.push('0x' + (await s.nextU64()).toString(16).padStart(16, '0'));
           }
           return out;""",
        SEED_ONE,
    )
    assert got == ["0x9b7d8cd1c6505214", "0xe94b9bd10964065a", "0xfb81dc2cb4813738"]


def test_first_dealer_vectors(js: Page) -> None:
    got = run(
        js,
        "return Promise.all([2, 3, 4].map(n => rng.firstDealer(rng.hexToBytes(arg), n)));",
        SEED_ONE,
    )
    assert got == [0, 1, 2]


def test_round_one_deck_and_deal_vectors(js: Page) -> None:
    got = run(
        js,
        """const seed = rng.hexToBytes(arg);
           const deck = await rng.deckForRound(seed, 1, 40);
           const m = await rules.Match.create(rules.makeRules({players: 2}), {seed});
           return {deck, racks: m.racks, discard: m.discard, stock: m.stock.slice(0, 3),
                   turn: m.turn, commitment: await rng.commitment(seed)};""",
        SEED_ONE,
    )
    assert got["deck"] == [
        6, 20, 30, 39, 15, 24, 10, 29, 27, 22, 12, 31, 28, 40, 26, 35, 23, 34, 21, 38,
        9, 8, 13, 17, 1, 11, 25, 3, 33, 18, 7, 37, 36, 2, 14, 16, 4, 19, 32, 5,
    ]  # fmt: skip
    assert got["racks"][1] == [21, 23, 26, 28, 12, 27, 10, 15, 30, 6]
    assert got["racks"][0] == [38, 34, 35, 40, 31, 22, 29, 24, 39, 20]
    assert got["discard"] == [9]
    assert got["stock"] == [8, 13, 17]
    assert got["turn"] == 1
    assert got["commitment"] == "ec4916dd28fc4c10d78e287ca5d9cc51ee1ae73cbfde08c6b37324cbfaac8bc5"


def test_fallback_sha256_matches_hashlib(js: Page) -> None:
    rng = random.Random(5)
    blobs = [
        bytes(rng.randrange(256) for _ in range(n)) for n in (0, 1, 55, 56, 63, 64, 65, 119, 1000)
    ]
    got = run(
        js,
        """return arg.map(hex => Array.from(sha.sha256Sync(rng.hexToBytes(hex)),
               b => b.toString(16).padStart(2, '0')).join(''));""",
        [b.hex() for b in blobs],
    )
    assert got == [hashlib.sha256(b).hexdigest() for b in blobs]


def test_scoring_agrees_with_rackcore(js: Page) -> None:
    rng = random.Random(11)
    racks = [rng.sample(range(1, 61), 10) for _ in range(150)]
    racks += [sorted(r) for r in racks[:40]] + [sorted(r, reverse=True) for r in racks[40:70]]
    racks += [[3, 4, 5, 9, 10, 11, 12, 30, 31, 40], list(range(11, 21))]
    got = run(
        js,
        """return arg.map(r => [false, true].map(d => [
               rules.scoredLength(r, d), rules.longestRun(r, d),
               rules.isWinning(r, 3, d), rules.isWinning(r, 0, d)]));""",
        racks,
    )
    want = [
        [
            [scored_length(r, d), longest_run(r, d), is_winning(r, 3, d), is_winning(r, 0, d)]
            for d in (False, True)
        ]
        for r in racks
    ]
    assert got == want


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"players": 4, "partners": True},
        {"players": 3, "partners": True},
        {"target": 49},
        {"target": 10000, "turn_cap": 50, "max_recycles": 0},
        {"tiebreak": "coin"},
        {"bonus": 1},
        {"colour": "red"},
        {"run_to_go_out": 11},
    ],
)
def test_rules_options_are_checked_like_rackcore(js: Page, options: dict[str, Any]) -> None:
    try:
        want: Any = Rules.from_dict(options).to_dict(full=True)
    except RulesError as exc:
        want = {"error": str(exc)}
    got = run(
        js, "try { return rules.makeRules(arg); } catch (e) { return {error: e.message}; }", options
    )
    assert got == want


def random_logs() -> list[dict[str, Any]]:
    """Finished matches over many variants, played by random legal moves, and tampered copies."""
    rng = random.Random(2024)
    logs: list[dict[str, Any]] = []
    for i in range(4):
        players = rng.choice([2, 3, 4])
        options: dict[str, Any] = {
            "players": players,
            "target": rng.choice([50, 50, 100]),
            "bonus": rng.random() < 0.5,
            "descending": rng.random() < 0.3,
            "repair_token": rng.random() < 0.5,
            "visible_center": rng.random() < 0.3,
            "reshuffle_on_recycle": rng.random() < 0.4,
            "max_recycles": rng.choice([0, 1, 3]),
            "turn_cap": 50,
            "tiebreak": rng.choice(["went_out", "extra_round"]),
        }
        if players == 4 and rng.random() < 0.5:
            options["partners"] = True
        match = Match(Rules(**options), seed=rng.randbytes(32))
        while match.outcome() is None:
            match.apply(rng.choice(match.legal_moves()))
        log = to_log(match)
        logs.append(log)
        if i % 2:
            bad = json.loads(json.dumps(log))
            k = rng.randrange(len(bad["moves"]))
            seat = bad["moves"][k]["seat"]
            bad["moves"][k] = {"seat": (seat + 1) % players, "act": "throw"}
            logs.append(bad)
        if i % 4 == 0:
            bad = json.loads(json.dumps(log))
            bad["result"]["scores"][0] += 5
            logs.append(bad)
        if i % 4 == 1:
            bad = json.loads(json.dumps(log))
            bad["seed"] = f"{int(bad['seed'], 16) ^ 1:064x}"
            logs.append(bad)
    # a stacked-deck log (as tests write them), and one that is cut short
    stacked = Match(Rules(players=2, target=50), decks=[list(range(40, 0, -1))] * 3, dealer=1)
    while stacked.outcome() is None and len(stacked.history) < 400:
        stacked.apply(rng.choice(stacked.legal_moves()))
    logs.append(to_log(stacked))
    running = Match(Rules(players=3), seed=rng.randbytes(32))
    for _ in range(25):
        running.apply(rng.choice(running.legal_moves()))
    logs.append(to_log(running, reveal=True))
    return logs


def plain(report: dict[str, Any]) -> dict[str, Any]:
    """A report with its reason spelled neutrally (Python writes lists as repr, JS as JSON)."""
    if report["valid"]:
        return report
    reason = re.sub(r"[\s'\"]", "", report["error"]["reason"]).replace("None", "null")
    return {**report, "error": {**report["error"], "reason": reason}}


def test_verifying_logs_agrees_with_rackcore(js: Page) -> None:
    logs = random_logs()
    got = run(
        js,
        "const out = []; for (const log of arg) out.push(await verify.verifyLog(log)); return out;",
        logs,
    )
    want = [verify(log) for log in logs]
    assert [g["valid"] for g in got] == [w["valid"] for w in want]
    assert [plain(g) for g in got] == [plain(w) for w in want]
    assert any(not w["valid"] and w["error"]["move_index"] is not None for w in want)
    assert any(w["valid"] and w["finished"] for w in want)


def test_a_log_that_is_not_a_log_is_refused(js: Page) -> None:
    got = run(
        js,
        """const out = [];
           for (const log of arg) {
             try { await verify.verifyLog(log); out.push('accepted'); }
             catch (e) { out.push(e.code + ': ' + e.message); }
           }
           return out;""",
        [
            {"format": "rackem-match/2", "moves": []},
            {"format": "rackem-match/1", "moves": [], "seed": "xyz"},
            {"format": "rackem-match/1", "moves": []},
            {
                "format": "rackem-match/1",
                "moves": [],
                "decks": [[1]],
                "first_dealer": 0,
                "rules": {"reshuffle_on_recycle": True},
            },
        ],
    )
    assert got == [
        'bad_log: not a rackem-match/1 log (the "format" field)',
        "bad_log: seed must be 64 hex characters",
        "bad_log: the log has neither a seed nor stacked decks",
        "bad_log: stacked decks cannot use reshuffle_on_recycle",
    ]


def test_moves_are_parsed_as_strictly_as_rackcore(js: Page) -> None:
    cases = [
        {"seat": 0, "act": "draw", "from": "stock"},
        {"seat": 0, "act": "draw"},
        {"seat": 0, "act": "place", "slot": 10},
        {"seat": 0, "act": "repair", "slot": 9},
        {"seat": 1, "act": "throw", "go_out": False},
        {"seat": 1, "act": "draw", "from": "discard", "go_out": False},
        {"seat": 4, "act": "throw"},
        {"seat": 0, "act": "fly"},
        {"seat": 0, "act": "throw", "by": "cover"},
        {"seat": 0, "act": "throw", "extra": 1},
    ]
    got = run(
        js,
        """return arg.map(m => {
             try { rules.parseMove(m); return 'ok'; } catch (e) { return e.message; }
           });""",
        cases,
    )
    want = []
    for case in cases:
        try:
            Move.from_dict(case)
            want.append("ok")
        except Exception as exc:  # MalformedMoveError
            want.append(str(exc))
    assert got == want
