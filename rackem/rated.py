"""``rackem tournament --rated``: the computer levels rated on the players' scale.

Each level is one player to OpenSkill's Plackett-Luce model (the model profiles are
rated by, services/profiles/ratings.py), every level starting at mu 25, sigma 25/3. The
tournament's matches update the levels' ratings in match order, placed by final score
(higher is better, equal scores tie; with partners one team per side). Shown values are
``round(60 * mu)``, as a player's. ``services/profiles/levels.py`` records the figures of
a long run, and the matchmaker gives a bot the level nearest its table's players.

A level that plays itself in a match (more seats than levels) is one player only once:
its best seat stands for it (the model rates distinct players). Stability is shown by
the value after half of the matches and after all of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openskill.models import PlackettLuce

from rackcore import Rules

__all__ = ["rate_levels", "rated_table", "shown"]


def shown(mu: float) -> int:
    """A rating as players see it."""
    return round(60 * mu)


def rate_levels(rules: Rules, records: Sequence[Any]) -> dict[str, Any]:
    """Each level's rating after ``records`` (``MatchRecord``s, in order): mu, sigma, the
    shown value, and the shown value after the first half."""
    model = PlackettLuce()
    ratings: dict[str, Any] = {}
    halfway: dict[str, int] = {}
    for index, record in enumerate(records):
        best: dict[str, int] = {}  # level → its best side score in this match
        for seat, level in enumerate(record.seats):
            score = record.scores[rules.side_of(seat)]
            best[level] = max(best.get(level, score), score)
        if len(best) >= 2:
            levels = list(best)
            teams = [[ratings.setdefault(lv, model.rating(name=lv))] for lv in levels]
            rated = model.rate(teams, scores=[best[lv] for lv in levels])
            for level, team in zip(levels, rated, strict=True):
                ratings[level] = team[0]
        if index + 1 == len(records) // 2:
            halfway = {lv: shown(r.mu) for lv, r in ratings.items()}
    return {
        "matches": len(records),
        "levels": {
            level: {
                "mu": rating.mu,
                "sigma": rating.sigma,
                "value": shown(rating.mu),
                "value_at_half": halfway.get(level),
            }
            for level, rating in sorted(ratings.items(), key=lambda kv: kv[1].mu)
        },
    }


def rated_table(rated: dict[str, Any]) -> str:
    lines = [f"rated over {rated['matches']} matches (Plackett-Luce; shown = round(60 mu))"]
    lines.append(f"{'level':<10}{'mu':>8}{'sigma':>8}{'shown':>7}{'at half':>9}")
    for level, r in rated["levels"].items():
        half = "-" if r["value_at_half"] is None else str(r["value_at_half"])
        lines.append(f"{level:<10}{r['mu']:>8.2f}{r['sigma']:>8.2f}{r['value']:>7}{half:>9}")
    return "\n".join(lines)
