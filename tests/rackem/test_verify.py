"""``rackem verify``: exit 0 for a valid log, 1 for a wrong one, 2 for what is not a log."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rackcore import Match, Rules, to_log
from rackem.cli import main

SEED = bytes(31) + b"\x01"


def _finished_log() -> dict[str, Any]:
    match = Match(Rules(target=50, max_recycles=0), SEED)
    while match.phase != "match_over":
        match.apply(match.legal_moves()[0])  # stock draws placed at index 0: stalemates
    return to_log(match)


def _write(tmp_path: Path, data: Any) -> str:
    path = tmp_path / "match.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def _verify(path: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["verify", path])
    return code, json.loads(capsys.readouterr().out)


def test_a_valid_log_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _finished_log()
    code, verdict = _verify(_write(tmp_path, log), capsys)
    assert code == 0
    assert verdict["valid"] is True
    assert verdict["finished"] is True
    assert verdict["scores"] == log["result"]["scores"]


def test_a_server_match_line_holding_the_log_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = {"code": "ABC234", "match": _finished_log()}
    assert _verify(_write(tmp_path, line), capsys)[0] == 0


def test_a_log_on_stdin_is_read(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _finished_log()
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(log)))
    assert _verify("-", capsys) == (0, {"valid": True, "finished": True, **log["result"]})


def test_an_illegal_move_exits_1_naming_its_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _finished_log()
    assert log["moves"][5]["act"] == "place"
    log["moves"][5] = {"seat": log["moves"][5]["seat"], "act": "draw", "from": "stock"}
    code, verdict = _verify(_write(tmp_path, log), capsys)
    assert code == 1
    assert verdict["valid"] is False
    assert verdict["error"]["move_index"] == 5


def test_a_wrong_claimed_result_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _finished_log()
    log["result"]["scores"][0] += 5
    code, verdict = _verify(_write(tmp_path, log), capsys)
    assert code == 1
    assert verdict["error"]["move_index"] is None
    assert "scores" in verdict["error"]["reason"]


def test_a_seed_that_does_not_match_the_commitment_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _finished_log()
    log["commitment"] = "ab" * 32
    code, verdict = _verify(_write(tmp_path, log), capsys)
    assert code == 1
    assert "commitment" in verdict["error"]["reason"]


@pytest.mark.parametrize(
    "content",
    [
        "not json {",
        "",
        json.dumps([1, 2, 3]),
        json.dumps({"format": "rackem-match/0", "moves": []}),
        json.dumps({"moves": [], "seed": "00" * 32}),
        json.dumps(
            {
                "format": "rackem-match/1",
                "rules": {"players": 2, "reshuffle_on_recycle": True},
                "decks": [list(range(1, 41))],
                "first_dealer": 0,
                "moves": [],
            }
        ),
    ],
)
def test_what_is_not_a_rackem_match_1_log_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str
) -> None:
    code, verdict = _verify(_write(tmp_path, content), capsys)
    assert code == 2
    assert verdict["valid"] is False
    assert verdict["error"]["move_index"] is None


def test_a_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, verdict = _verify(str(tmp_path / "nope.json"), capsys)
    assert code == 2
    assert "cannot read" in verdict["error"]["reason"]


def test_rackem_verify_runs_as_a_command(tmp_path: Path) -> None:
    good = _write(tmp_path, _finished_log())
    done = subprocess.run(
        [sys.executable, "-m", "rackem.cli", "verify", good],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["valid"] is True
