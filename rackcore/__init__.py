"""rackcore: the Rack-O rules as rackem plays them (docs/rules.md).

Pure: standard library only, no I/O, no clock, no global random.
"""

from __future__ import annotations

from rackcore._errors import (
    IllegalMoveError,
    LogError,
    MalformedMoveError,
    MatchOverError,
    NotYourTurnError,
    RackError,
    RulesError,
)
from rackcore._legal import legal_for
from rackcore._log import FORMAT, match_from_log, replay, to_log, verify
from rackcore._moves import Move
from rackcore._rng import Stream, commitment, deck_for_round, first_dealer, new_seed, shuffle
from rackcore._rules import Rules
from rackcore._scoring import bonus_for_run, is_winning, longest_run, rack_points, scored_length
from rackcore._state import Match, Outcome, RoundResult
from rackcore._view import SPECTATOR, View, observe

__all__ = [
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
