"""The computer levels on the players' rating scale, as measured by rated bot-vs-bot play.

``rackem tournament --rated`` (rackem/rated.py) rates each level as one player with
OpenSkill's Plackett-Luce model, every level starting where a new profile starts (mu 25,
shown 1500), placed by final score in every match. The figures below are the shown values
(``round(60 * mu)``) at the end of the run named in ``MEASURED``; docs/matchmaker.md,
*Matched by level*, has the run's table. The matchmaker gives the seats a quick-match
table fills with bots the level whose rating is nearest its humans' mean
(``nearest_level``), and a rated private table without a chosen level the one nearest
its creator.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["LEVEL_RATINGS", "MEASURED", "nearest_level"]

MEASURED = (
    "rackem tournament --players 2 --bots hard,medium,easy --matches 1000 --rated --seed levels"
)
# After 1000 matches (after 500: easy -442, medium 1573, hard 3164). Easy won none of
# its matches and hard 98% of its: the model has no finite gap for a level that never
# wins, so easy's figure keeps falling (and medium's rising) the longer the run; the
# order, and the nearest-level boundaries (567 and 2401), are what the matchmaker uses.
# A second seed (levels-b, easy winning 2 of 667): easy -461, medium 1741, hard 3000.
LEVEL_RATINGS: Mapping[str, int] = {"easy": -605, "medium": 1740, "hard": 3062}


def nearest_level(rating: float, ratings: Mapping[str, int] = LEVEL_RATINGS) -> str:
    """The level whose rating is nearest ``rating`` (the lower one of two as near)."""
    return min(ratings, key=lambda level: (abs(ratings[level] - rating), ratings[level]))
