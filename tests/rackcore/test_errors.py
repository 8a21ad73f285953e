from __future__ import annotations

import pytest

from rackcore import (
    IllegalMoveError,
    LogError,
    MalformedMoveError,
    MatchOverError,
    NotYourTurnError,
    RackError,
    RulesError,
)


@pytest.mark.parametrize(
    ("error", "parent", "code"),
    [
        (RulesError, RackError, "bad_rules"),
        (MalformedMoveError, RackError, "malformed_move"),
        (IllegalMoveError, RackError, "illegal_move"),
        (NotYourTurnError, IllegalMoveError, "not_your_turn"),
        (MatchOverError, IllegalMoveError, "match_over"),
        (LogError, RackError, "bad_log"),
    ],
)
def test_each_error_has_its_parent_and_a_stable_code(
    error: type[RackError], parent: type[RackError], code: str
) -> None:
    assert issubclass(error, parent)
    assert error.code == code
    assert error("why").code == code


def test_the_error_tree_is_rooted_in_one_exception() -> None:
    assert RackError.code == "rack_error"
    assert issubclass(RackError, Exception)
    assert not issubclass(RackError, (ValueError, KeyError))
