from __future__ import annotations

import pytest

from services.common.errors import ServiceError
from services.matchmaker.names import BOT_NAMES, bot_names, clean_name


def test_names_are_trimmed() -> None:
    assert clean_name("  Ann \t") == "Ann"
    assert clean_name("Zoë Ōkubo") == "Zoë Ōkubo"
    assert clean_name("x" * 20) == "x" * 20


@pytest.mark.parametrize(
    "raw",
    ["", "   ", "x" * 21, "A\x00nn", "Ann\nBob", "Ann\x1b[31m", "\u202eAnn", "A\u200bnn"],
)
def test_bad_names_are_refused(raw: str) -> None:
    with pytest.raises(ServiceError) as caught:
        clean_name(raw)
    assert caught.value.code == "bad_name"


def test_bot_names_are_distinct_and_avoid_taken_names() -> None:
    taken = set(BOT_NAMES[:5])
    names = bot_names("t0123456789abcdef", 3, taken)
    assert len(names) == 3 == len(set(names))
    assert not set(names) & taken
    assert all(name.startswith("Bot ") for name in names)


def test_bot_names_vary_by_table() -> None:
    firsts = {bot_names(f"t{i:016x}", 1, ())[0] for i in range(50)}
    assert len(firsts) > 1
