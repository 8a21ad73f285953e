"""``rackem review FILE --seat N``: text or ``rackem-review/1`` JSON; exit 2 for what it refuses."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from rackcore import Match, Move, Rules, observe, to_log
from rackcore.bots import choose
from rackcore.review import review
from rackem.cli import main


def _played_log() -> dict[str, Any]:
    """A finished hard-vs-medium match, as ``rackem tournament`` plays it, with its seed."""
    match = Match(Rules(target=150), hashlib.sha256(b"test_review_cli").digest())
    levels = ("hard", "medium")
    while match.outcome() is None:
        if match.phase == "round_over":
            match.next_round()
        match.apply(choose(observe(match, match.turn), levels[match.turn], 1).with_by("bot"))
    return to_log(match)


@pytest.fixture(scope="module")
def log_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    log = _played_log()
    path = tmp_path_factory.mktemp("review") / "match.json"
    path.write_text(json.dumps(log), encoding="utf-8")
    return path, log


def test_json_is_the_review_of_the_log(
    log_file: tuple[Path, dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, log = log_file
    assert main(["review", str(path), "--seat", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data == review(log, 1).to_dict()
    assert data["format"] == "rackem-review/1" and data["summary"]["decisions"] > 20


def test_text_has_a_line_per_decision_then_the_summary(
    log_file: tuple[Path, dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, log = log_file
    result = review(log, 1)
    assert main(["review", str(path), "--seat", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"seat 1: {len(result.decisions)} decisions"
    rows = lines[2 : 2 + len(result.decisions)]
    for row, d in zip(rows, result.decisions, strict=True):
        assert row.split()[:4] == [str(d.at), str(d.round), str(d.turn), "bot"]
        assert row.endswith(f"{d.cost:.2f}  {d.mark}")
    summary = lines[2 + len(result.decisions)]
    assert summary.startswith(f"accuracy {result.accuracy:.1f}% (marked best or good); best ")
    costly = lines[3 + len(result.decisions) :]
    assert costly[0] == "costliest:" and len(costly) == 1 + len(result.costliest) > 1
    first = result.decisions[result.costliest[0]]
    assert costly[1].startswith(f"  1. move {first.at} (round {first.round}, turn {first.turn}): ")
    assert "; better: " in costly[1] and costly[1].endswith(f"({first.cost:.2f} turns)")


def _stacked_match() -> Match:
    """Seat 0 moves first; 16, the stock's first card, goes out in the slot marked 50."""
    mine = [1, 2, 3, 5, 6, 8, 10, 12, 14, 9]
    rest = [c for c in range(1, 41) if c not in {*mine, 7, 16}]
    theirs = rest[9::-1]  # decreasing: not a winning rack
    dealt = [card for slot in range(9, -1, -1) for card in (mine[slot], theirs[slot])]
    deck = [*dealt, 7, 16, *rest[10:]]
    return Match(Rules(players=2), decks=[deck], dealer=1)


def test_moves_are_told_in_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    match = _stacked_match()
    match.apply(Move.draw(0, "stock"))
    match.apply(Move.throw(0))
    path = tmp_path / "match.json"
    path.write_text(json.dumps(to_log(match)), encoding="utf-8")
    assert main(["review", str(path), "--seat", "0"]) == 0
    out = capsys.readouterr().out
    assert "throw 16" in out and "16 @50" in out
    assert "throw the 16 away; better: put the 16 in the slot marked 50 (for the 9)" in out


def test_a_running_match_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    match = Match(Rules(), bytes(32))
    match.apply(Move.draw(match.turn, "stock"))
    path = tmp_path / "running.json"
    path.write_text(json.dumps(to_log(match)), encoding="utf-8")
    assert main(["review", str(path), "--seat", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rackem review: ") and "seed is not revealed" in err


@pytest.mark.parametrize(
    ("content", "seat", "reason"),
    [
        ("not json", "0", "the file is not JSON"),
        ('{"format": "other"}', "0", "not a rackem-match/1 log"),
        (None, "5", "no seat 5 at this table"),
    ],
)
def test_what_is_not_reviewable_exits_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    log_file: tuple[Path, dict[str, Any]],
    content: str | None,
    seat: str,
    reason: str,
) -> None:
    path = log_file[0]
    if content is not None:
        path = tmp_path / "bad.json"
        path.write_text(content, encoding="utf-8")
    assert main(["review", str(path), "--seat", seat]) == 2
    assert reason in capsys.readouterr().err


def test_a_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["review", str(tmp_path / "none.json"), "--seat", "0"]) == 2
    assert "cannot read" in capsys.readouterr().err
