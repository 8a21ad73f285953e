"""The one name rule, as the gateway, the matchmaker and the table each apply it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from services.common.errors import ServiceError
from services.common.names import name_problem
from services.gateway.protocol import ProtocolError, check_name
from services.matchmaker.names import clean_name
from services.table.creation import _checked_name


def _table(raw: str) -> str:
    return _checked_name(raw, 0, bot=False)


CHECKERS: list[Callable[[str], str]] = [check_name, clean_name, _table]
GOOD = ["Ann", "  Ann \t", "Zoë Ōkubo", "x" * 20, "👨‍👩", "Zoë 👩‍👩‍👧", "🏳️‍🌈"]
BAD = [
    "",
    "   ",
    "x" * 21,
    "A\x00nn",
    "Ann\nBob",
    "Ann\x1b[31m",
    "\u202eAnn",  # a bidi override
    "A\u200bnn",  # a zero width space
    "A\u2028B",  # a line separator
    "A\ue000",  # private use
    "A\u0378",  # unassigned
    "\u200d",  # the joiner alone is allowed in a name, but is no name
]


@pytest.mark.parametrize("check", CHECKERS)
@pytest.mark.parametrize("raw", GOOD)
def test_every_service_accepts_the_same_names(check: Callable[[str], str], raw: str) -> None:
    assert check(raw) == raw.strip()


@pytest.mark.parametrize("check", CHECKERS)
@pytest.mark.parametrize("raw", BAD)
def test_every_service_refuses_the_same_names(check: Callable[[str], str], raw: str) -> None:
    with pytest.raises((ProtocolError, ServiceError)) as caught:
        check(raw)
    assert caught.value.code == "bad_name"  # type: ignore[union-attr]
    assert str(caught.value) == name_problem(raw.strip())
