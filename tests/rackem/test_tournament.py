"""``rackem tournament``: seating, seeds, the summary, and the command line."""

from __future__ import annotations

import json

import pytest

from rackcore import Rules
from rackem.cli import main
from rackem.tournament import MatchRecord, match_seed, play_match, seating, summarize, wilson


def test_seats_take_the_bots_round_robin_and_rotate_each_match() -> None:
    assert seating(["hard", "medium"], 2, 0) == ("hard", "medium")
    assert seating(["hard", "medium"], 2, 1) == ("medium", "hard")
    assert seating(["hard", "medium"], 4, 0) == ("hard", "medium", "hard", "medium")
    bots = ["hard", "medium", "medium", "medium"]
    assert [seating(bots, 4, i).index("hard") for i in range(4)] == [0, 3, 2, 1]


def test_match_seeds_are_32_bytes_and_differ_per_match_and_tournament() -> None:
    seeds = {match_seed("0", i) for i in range(5)} | {match_seed("1", 0)}
    assert len(seeds) == 6
    assert all(len(s) == 32 for s in seeds)


def test_the_wilson_interval_brackets_the_rate() -> None:
    low, high = wilson(60, 100)
    assert low == pytest.approx(0.502, abs=1e-3)
    assert high == pytest.approx(0.691, abs=1e-3)
    assert wilson(0, 10)[0] == 0.0
    assert wilson(10, 10)[1] == 1.0
    assert wilson(0, 0) == (0.0, 1.0)


def test_a_match_is_played_to_its_end_and_recorded() -> None:
    rules = Rules(players=2, target=100)
    record = play_match(rules, ("medium", "easy"), match_seed("t", 0))
    assert record.winner in (0, 1)
    assert record.rounds
    won = [w for w in record.rounds if w is not None]
    assert len(record.out_turns) == len(won)
    assert all(t > 0 for t in record.out_turns)
    assert set(record.times) == {"medium", "easy"}
    assert play_match(rules, ("medium", "easy"), match_seed("t", 0)).rounds == record.rounds


def test_the_summary_counts_wins_turns_and_rounds_per_bot() -> None:
    rules = Rules(players=2)
    records = [
        MatchRecord(("hard", "easy"), 0, [0, None, 0], [10, 14], {"hard": [0.001, 0.003]}),
        MatchRecord(("easy", "hard"), 1, [1, 0], [12, 20], {"hard": [0.002]}, {"hard": [0.004]}),
    ]
    summary = summarize(rules, records)
    bots = {b["bot"]: b for b in summary["bots"]}
    assert bots["hard"]["wins"] == 2
    assert bots["hard"]["win_rate"] == 1.0
    assert bots["hard"]["turns_to_go_out"] == pytest.approx((10 + 14 + 12) / 3)
    assert bots["easy"]["turns_to_go_out"] == 20
    assert bots["easy"]["wins"] == 0
    assert bots["hard"]["no_winner_rate"] == pytest.approx(1 / 5)
    assert bots["hard"]["decision_ms_p50"] == pytest.approx(2.0)
    assert bots["hard"]["decision_ms_p99"] == pytest.approx(3.0)
    assert bots["hard"]["decision_cpu_ms_p99"] == pytest.approx(4.0)
    assert summary["rounds"] == 5


def test_partners_credit_the_winning_pair() -> None:
    rules = Rules(players=4, partners=True)
    records = [MatchRecord(("hard", "medium", "hard", "medium"), 1, [1], [9], {})]
    bots = {b["bot"]: b for b in summarize(rules, records)["bots"]}
    assert bots["medium"]["wins"] == 1
    assert bots["hard"]["wins"] == 0
    assert bots["hard"]["fair_share"] == 0.5


def test_the_command_prints_one_json_object(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["tournament", "--players", "3", "--bots", "medium,easy", "--matches", "2"]
    assert main([*args, "--rules", '{"target": 50}', "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["matches"] == 2
    assert out["players"] == 3
    assert out["rules"] == {"players": 3, "target": 50}
    bots = {b["bot"]: b for b in out["bots"]}
    assert set(bots) == {"medium", "easy"}
    for b in bots.values():
        assert set(b) >= {
            "wins",
            "win_rate",
            "win_rate_95",
            "turns_to_go_out",
            "no_winner_rate",
            "decision_ms_p50",
            "decision_ms_p99",
            "decision_cpu_ms_p50",
            "decision_cpu_ms_p99",
        }
    assert sum(b["wins"] for b in bots.values()) == 2


def test_the_command_prints_a_table_without_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["tournament", "--bots", "easy", "--matches", "1", "--rules", '{"target": 50}']
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "win rate" in out
    assert out.splitlines()[2].startswith("easy")


def test_jobs_give_the_same_result_as_one_process(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["tournament", "--bots", "easy,medium", "--matches", "2", "--rules", '{"target": 50}']
    main([*args, "--json"])
    one = json.loads(capsys.readouterr().out)
    main([*args, "--json", "--jobs", "2"])
    two = json.loads(capsys.readouterr().out)
    fields = ("bot", "wins", "turns_to_go_out", "no_winner_rate")
    for a, b in zip(one["bots"], two["bots"], strict=True):
        assert [a[f] for f in fields] == [b[f] for f in fields]


def test_a_retired_level_can_be_measured_against_todays(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["tournament", "--bots", "hard,hard-2025", "--matches", "2"]
    assert main([*args, "--rules", '{"target": 50}', "--json"]) == 0
    bots = {b["bot"]: b for b in json.loads(capsys.readouterr().out)["bots"]}
    assert set(bots) == {"hard", "hard-2025"}
    assert sum(b["wins"] for b in bots.values()) == 2


@pytest.mark.parametrize(
    "bad",
    [
        ["--bots", "grandmaster"],
        ["--matches", "0"],
        ["--rules", "[1]"],
        ["--rules", '{"players": 3}'],
        ["--rules", '{"speed": 2}'],
    ],
)
def test_bad_arguments_are_refused(bad: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tournament", *bad]) == 2
    assert "rackem tournament:" in capsys.readouterr().err
