from __future__ import annotations

import rackcore

PUBLIC = [
    "FORMAT",
    "SPECTATOR",
    "IllegalMoveError",
    "LogError",
    "MalformedMoveError",
    "Match",
    "MatchOverError",
    "Move",
    "NotYourTurnError",
    "Outcome",
    "RackError",
    "RoundResult",
    "Rules",
    "RulesError",
    "Stream",
    "View",
    "bonus_for_run",
    "commitment",
    "deck_for_round",
    "first_dealer",
    "is_winning",
    "legal_for",
    "longest_run",
    "match_from_log",
    "new_seed",
    "observe",
    "rack_points",
    "replay",
    "scored_length",
    "shuffle",
    "to_log",
    "verify",
]


def test_the_public_surface_is_pinned() -> None:
    assert sorted(rackcore.__all__) == sorted(PUBLIC)


def test_every_public_name_exists_and_nothing_private_leaks() -> None:
    for name in rackcore.__all__:
        assert hasattr(rackcore, name)
    public = {n for n in vars(rackcore) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(rackcore, n)).__name__ == "module"}
    assert public - modules - {"annotations"} == set(PUBLIC)
