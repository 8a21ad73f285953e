"""``rackem replay``: a readable account of a logged match, round by round."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rackcore import Match, Move, Rules, to_log
from rackem.cli import main

SEED = bytes(31) + b"\x01"


def _finished_log() -> dict[str, Any]:
    match = Match(Rules(target=50, max_recycles=0), SEED)
    while match.phase != "match_over":
        match.apply(match.legal_moves()[0])
    return to_log(match)


def _write(tmp_path: Path, data: Any) -> str:
    path = tmp_path / "match.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def test_replay_prints_every_round_and_the_winner(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _finished_log()
    rounds = log["result"]["rounds"]
    assert len(rounds) >= 2
    assert main(["replay", _write(tmp_path, log)]) == 0
    out = capsys.readouterr().out
    for number in range(1, len(rounds) + 1):
        assert f"\nRound {number} (dealer seat " in out
    assert out.count("round over: no winner") == len(rounds)
    assert f"points {rounds[0]['points']}" in out
    assert f"Match won by side {log['result']['winner']}" in out


def test_replay_shows_the_deal_and_each_move(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = to_log(Match(Rules(), SEED), reveal=True)
    log["moves"] = [
        Move.draw(1, "stock").to_dict(),
        Move.place(1, 3).to_dict(),
        Move.draw(0, "discard").to_dict(),
        Move.place(0, 9, go_out=False).to_dict(),
    ]
    assert main(["replay", _write(tmp_path, log)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "Round 1 (dealer seat 0)" in lines
    assert "  seat 1 dealt 21 23 26 28 12 27 10 15 30 6" in lines
    assert "  seat 0 dealt 38 34 35 40 31 22 29 24 39 20" in lines
    assert "     0  seat 1 draws from the stock" in lines
    assert "     1  seat 1 places 8 at slot 3" in lines
    assert "     2  seat 0 draws from the discard" in lines
    assert "     3  seat 0 places 28 at slot 9" in lines


def test_replay_stops_at_a_refused_move_with_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _finished_log()
    log["moves"][3] = {"seat": log["moves"][3]["seat"], "act": "draw", "from": "stock"}
    assert main(["replay", _write(tmp_path, log)]) == 1
    out = capsys.readouterr().out
    assert "move 3: refused:" in out
    assert "     4  " not in out


def test_replay_refuses_a_round_missing_from_a_stacked_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    match = Match(Rules(max_recycles=0), decks=[list(range(1, 41))], dealer=0)
    while match.phase != "round_over":
        match.apply(match.legal_moves()[0])
    log = to_log(match)
    log["moves"].append(Move.draw(match.turn, "stock").to_dict())
    assert main(["replay", _write(tmp_path, log)]) == 1
    assert f"move {len(log['moves']) - 1}: refused:" in capsys.readouterr().out


@pytest.mark.parametrize("content", ["{not json", json.dumps({"format": "chess/1", "moves": []})])
def test_replay_of_what_is_not_a_log_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str
) -> None:
    assert main(["replay", _write(tmp_path, content)]) == 2
    assert capsys.readouterr().out.startswith("cannot replay:")


def test_rackem_replay_runs_as_a_command(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "rackem.cli", "replay", _write(tmp_path, _finished_log())],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Round 1 (dealer seat 0)" in done.stdout
