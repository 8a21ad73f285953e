"""Rating a finished match: OpenSkill's Plackett-Luce model (docs/profiles.md, *Ratings*).

Every profile starts at mu 25, sigma 25/3 (the model's defaults) and shows
``round(60 * mu)`` (1500 at the start). The rated players of a match are its seats with a
(live) profile that are not bots; a match is rated when the table was made ``rated`` and
at least two sides have a rated player. Sides are placed by final score (higher is
better, equal scores tie), except that the match's winner is first when the rules'
tiebreak gave it a tie on points; partners are one team per side; a side whose player
left ranks after every side that stayed, tied with the other leavers. Seats without a
profile (bots, guests, a profile forgotten before its result came in) take no part in
the rating, only in the order of the others.

A rating is *provisional* while sigma is above ``PROVISIONAL_SIGMA``: measured (docs/
profiles.md) as where a new player's sigma stands after about ten rated matches.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from openskill.models import PlackettLuce

from services.archive.profiles import MatchResult, Rating

__all__ = [
    "MODEL",
    "MU",
    "PROVISIONAL_SIGMA",
    "SIGMA",
    "Side",
    "is_provisional",
    "rate",
    "rated_sides",
    "rating",
    "shown",
]

MODEL = PlackettLuce()
MU: float = MODEL.mu  # 25
SIGMA: float = MODEL.sigma  # 25/3
# A new player's sigma after ~10 rated matches among established players (9 to 11 by
# the player count; docs/profiles.md and tests/services/profiles/test_ratings.py).
PROVISIONAL_SIGMA = 6.3


@dataclass(frozen=True, slots=True)
class Side:
    """The rated players of one side of a match, and where the side finished."""

    profiles: tuple[str, ...]
    rank: int  # 1 = first; equal ranks tie


def shown(mu: float) -> int:
    """A rating as players see it."""
    return round(60 * mu)


def is_provisional(sigma: float) -> bool:
    return sigma > PROVISIONAL_SIGMA


def rating(mu: float, sigma: float) -> Rating:
    return Rating(mu, sigma, shown(mu), is_provisional(sigma))


def rated_sides(result: MatchResult, live: Mapping[str, object]) -> list[Side]:
    """The sides of ``result`` that hold a rated player (a seat whose profile is in
    ``live``, not a bot), ranked; empty when the match is not rated."""
    if not result.rated:
        return []
    by_seat = {seat.seat: seat for seat in result.seats}
    groups = result.teams or tuple((seat.seat,) for seat in result.seats)
    seen: set[str] = set()
    found: list[tuple[tuple[str, ...], tuple[bool, bool, int]]] = []  # (profiles, order)
    for group in groups:
        seats = [by_seat[number] for number in group if number in by_seat]
        rated = [s for s in seats if s.profile in live and not s.bot and s.profile not in seen]
        seen.update(s.profile for s in rated)
        if rated:
            # Lower is better: stayed before left (leavers tie among themselves), then
            # the winner (of a tie on points too, by the rules' tiebreak), then the score.
            if any(s.left for s in rated):
                order = (True, False, 0)
            else:
                order = (False, not any(s.won for s in seats), -max(s.score for s in seats))
            found.append((tuple(s.profile for s in rated), order))
    if len(found) < 2:
        return []
    return [
        Side(profiles, 1 + sum(other < order for _, other in found)) for profiles, order in found
    ]


def rate(
    result: MatchResult, current: Mapping[str, tuple[float, float]]
) -> dict[str, tuple[float, float]]:
    """The new ``(mu, sigma)`` of each rated player of ``result``, from ``current`` (the
    live profiles' ratings by id); empty when the match is not rated."""
    sides = rated_sides(result, current)
    if not sides:
        return {}
    teams = [[MODEL.rating(*current[profile]) for profile in side.profiles] for side in sides]
    after = MODEL.rate(teams, ranks=[float(side.rank) for side in sides])
    return {
        profile: (new.mu, new.sigma)
        for side, team in zip(sides, after, strict=True)
        for profile, new in zip(side.profiles, team, strict=True)
    }
