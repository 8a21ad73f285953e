"""Ratings (services/profiles/ratings.py): who is rated, how sides are placed, the library's
numbers, and where ``PROVISIONAL_SIGMA`` comes from."""

from __future__ import annotations

import random
import statistics
from typing import Any

import pytest
from openskill.models import PlackettLuce

from services.archive.profiles import MatchResult, SeatResult
from services.profiles import ratings
from services.profiles.ratings import Side, rate, rated_sides


def _seat(
    seat: int,
    profile: str,
    score: int,
    *,
    left: bool = False,
    bot: bool = False,
    won: bool = False,
) -> SeatResult:
    return SeatResult(seat, f"s{seat}", profile, bot, left, score, 1, won, 0, (), 0)


def _match(
    *seats: SeatResult, rated: bool = True, teams: tuple[tuple[int, ...], ...] = ()
) -> MatchResult:
    return MatchResult("t1", 0, len(seats), rated, "", seats, teams)


LIVE = dict.fromkeys("abcd", (ratings.MU, ratings.SIGMA))


def test_a_new_profile_shows_1500_and_is_provisional() -> None:
    new = ratings.rating(ratings.MU, ratings.SIGMA)
    assert (new.value, new.provisional) == (1500, True)
    assert ratings.shown(30.0) == 1800 and ratings.shown(25.009) == 1501
    assert not ratings.rating(25, ratings.PROVISIONAL_SIGMA).provisional


def test_sides_are_placed_by_score_with_ties() -> None:
    sides = rated_sides(_match(_seat(0, "a", 300), _seat(1, "b", 500), _seat(2, "c", 300)), LIVE)
    assert sides == [Side(("a",), 2), Side(("b",), 1), Side(("c",), 2)]


def test_a_tie_on_points_the_tiebreak_decided_places_its_winner_first() -> None:
    tied = _match(_seat(0, "a", 505), _seat(1, "b", 505, won=True), _seat(2, "c", 505))
    assert [s.rank for s in rated_sides(tied, LIVE)] == [2, 1, 2]
    new = rate(tied, LIVE)
    assert new["b"][0] > ratings.MU > new["a"][0] == new["c"][0]


def test_leavers_rank_after_everyone_tied_among_themselves() -> None:
    match = _match(
        _seat(0, "a", 900, left=True),
        _seat(1, "b", 10),
        _seat(2, "c", 800, left=True),
        _seat(3, "d", 20),
    )
    assert [s.rank for s in rated_sides(match, LIVE)] == [3, 2, 3, 1]


def test_bots_guests_and_forgotten_profiles_are_not_rated_players() -> None:
    match = _match(
        _seat(0, "a", 100),
        _seat(1, "", 900, bot=True),
        _seat(2, "", 800),
        _seat(3, "gone", 700),
        _seat(4, "b", 50),
    )
    assert rated_sides(match, LIVE) == [Side(("a",), 1), Side(("b",), 2)]


def test_a_match_needs_rated_and_two_rated_sides() -> None:
    two = (_seat(0, "a", 100), _seat(1, "b", 50))
    assert rated_sides(_match(*two, rated=False), LIVE) == []
    assert rate(_match(*two, rated=False), LIVE) == {}
    assert rated_sides(_match(_seat(0, "a", 100), _seat(1, "", 50, bot=True)), LIVE) == []
    # partners on one side against two bots: one rated side, not rated
    bots = (_seat(1, "", 50, bot=True), _seat(3, "", 50, bot=True))
    partners = _match(
        _seat(0, "a", 100), bots[0], _seat(2, "b", 100), bots[1], teams=((0, 2), (1, 3))
    )
    assert rated_sides(partners, LIVE) == []


def test_partners_are_one_team_per_side() -> None:
    match = _match(
        _seat(0, "a", 300), _seat(1, "b", 500), _seat(2, "c", 300), _seat(3, "d", 500),
        teams=((0, 2), (1, 3)),
    )  # fmt: skip
    assert rated_sides(match, LIVE) == [Side(("a", "c"), 2), Side(("b", "d"), 1)]
    model = PlackettLuce()
    want = model.rate(
        [[model.rating(), model.rating()], [model.rating(), model.rating()]], ranks=[2, 1]
    )
    got = rate(match, LIVE)
    for profile, new in zip("acbd", [*want[0], *want[1]], strict=True):
        assert got[profile] == pytest.approx((new.mu, new.sigma))
    assert got["b"][0] > ratings.MU > got["a"][0]


def test_rate_is_the_library_from_the_players_ratings() -> None:
    live = {"a": (30.0, 4.0), "b": (22.0, 7.5), "c": (25.0, 8.3)}
    match = _match(_seat(0, "a", 200), _seat(1, "b", 600), _seat(2, "c", 200, left=True))
    model = PlackettLuce()
    teams = [[model.rating(*live[p])] for p in "abc"]
    want = model.rate(teams, ranks=[2, 1, 3])
    got = rate(match, live)
    assert list(got) == ["a", "b", "c"]
    for profile, team in zip("abc", want, strict=True):
        assert got[profile] == pytest.approx((team[0].mu, team[0].sigma))


def _matches_to_establish(seats: int, rng: random.Random, trials: int = 200) -> list[int]:
    """How many rated ``seats``-player matches a new player needs until its rating is no
    longer provisional, for ``trials`` new players joining a population of 300 whose
    players have played ~30 rated matches each. Skills are spread as a new player's prior
    (mu 25, sigma 25/3); a match's placement is by performance, skill plus noise beta."""
    model = PlackettLuce()
    skills = [rng.gauss(ratings.MU, ratings.SIGMA) for _ in range(300)]
    known = [model.rating() for _ in skills]

    def play(players: list[int], new: tuple[float, Any] | None = None) -> Any:
        """One match of ``players`` (and the ``new`` player: skill, rating): its new rating."""
        teams = [[known[p]] for p in players]
        perf = [rng.gauss(skills[p], model.beta) for p in players]
        if new is not None:
            teams.insert(0, [new[1]])
            perf.insert(0, rng.gauss(new[0], model.beta))
        rated = model.rate(teams, scores=perf)
        for p, team in zip(players, rated[len(rated) - len(players) :], strict=True):
            known[p] = team[0]
        return rated[0][0]

    for _ in range(30 * len(skills) // seats):
        play(rng.sample(range(len(skills)), seats))
    counts = []
    for _ in range(trials):
        me = (rng.gauss(ratings.MU, ratings.SIGMA), model.rating())
        played = 0
        while ratings.is_provisional(me[1].sigma) and played < 40:
            me = (me[0], play(rng.sample(range(len(skills)), seats - 1), me))
            played += 1
        counts.append(played)
    return counts


def test_the_provisional_threshold_is_about_ten_matches() -> None:
    """The measurement behind ``PROVISIONAL_SIGMA`` (docs/profiles.md, *Ratings*)."""
    rng = random.Random(33)
    medians = {seats: statistics.median(_matches_to_establish(seats, rng)) for seats in (2, 3, 4)}
    print(f"rated matches until established (median), by seats: {medians}")
    assert all(9 <= median <= 11 for median in medians.values()), medians
