"""``rackem tournament --rated`` (rackem/rated.py): the levels rated as players, in match
order, placed by final score; the command's JSON carries the figures."""

from __future__ import annotations

import json

import pytest
from openskill.models import PlackettLuce

from rackcore import Rules
from rackem.cli import main
from rackem.rated import rate_levels, shown
from rackem.tournament import MatchRecord


def test_levels_are_rated_by_final_score_in_match_order() -> None:
    rules = Rules(players=2)
    records = [
        MatchRecord(("hard", "easy"), 0, scores=[520, 180]),
        MatchRecord(("easy", "hard"), 1, scores=[300, 505]),
        MatchRecord(("medium", "easy"), 0, scores=[500, 500]),  # a tie
    ]
    rated = rate_levels(rules, records)
    model = PlackettLuce()
    hard, easy, medium = model.rating(), model.rating(), model.rating()
    [[hard], [easy]] = model.rate([[hard], [easy]], scores=[520, 180])
    [[easy], [hard]] = model.rate([[easy], [hard]], scores=[300, 505])
    [[medium], [easy]] = model.rate([[medium], [easy]], scores=[500, 500])
    levels = rated["levels"]
    assert list(levels) == sorted(levels, key=lambda lv: levels[lv]["mu"])  # weakest first
    for level, rating in (("hard", hard), ("easy", easy), ("medium", medium)):
        assert levels[level]["mu"] == rating.mu and levels[level]["sigma"] == rating.sigma
        assert levels[level]["value"] == shown(rating.mu) == round(60 * rating.mu)
    assert levels["hard"]["value_at_half"] is not None  # after the first match


def test_a_level_playing_itself_counts_once_by_its_best_seat() -> None:
    rules = Rules(players=3)
    rated = rate_levels(rules, [MatchRecord(("hard", "hard", "easy"), 0, scores=[510, 90, 200])])
    assert rated["levels"]["hard"]["mu"] > 25 > rated["levels"]["easy"]["mu"]


def test_the_command_prints_the_rated_figures(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["tournament", "--bots", "medium,easy", "--matches", "2", "--rated", "--json"]
    assert main([*args, "--rules", '{"target": 50}']) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rated"]["matches"] == 2
    assert set(out["rated"]["levels"]) == {"medium", "easy"}
