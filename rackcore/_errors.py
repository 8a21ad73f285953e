"""One error tree for everything the rules can refuse."""

from __future__ import annotations

__all__ = [
    "IllegalMoveError",
    "LogError",
    "MalformedMoveError",
    "MatchOverError",
    "NotYourTurnError",
    "RackError",
    "RulesError",
]


class RackError(Exception):
    """Base of every error rackcore raises on purpose. ``code`` is stable."""

    code = "rack_error"


class RulesError(RackError):
    """A rules object or option is out of range or unknown."""

    code = "bad_rules"


class MalformedMoveError(RackError):
    """A move that is not a well-formed move at all (bad act, slot, field)."""

    code = "malformed_move"


class IllegalMoveError(RackError):
    """A well-formed move that the rules do not allow now."""

    code = "illegal_move"


class NotYourTurnError(IllegalMoveError):
    """A move by a seat whose turn it is not."""

    code = "not_your_turn"


class MatchOverError(IllegalMoveError):
    """A move after the match has ended."""

    code = "match_over"


class LogError(RackError):
    """A match log that is not a well-formed ``rackem-match/1`` object."""

    code = "bad_log"
