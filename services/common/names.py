"""The one rule for player names, shared by the gateway, the matchmaker and the table.

A name is trimmed, then has 1 to ``MAX_NAME`` characters, none of them control, format
(bidi overrides, zero-width), surrogate, private-use or unassigned characters, nor line
or paragraph separators; the zero width joiner U+200D alone is allowed, because it joins
emoji sequences ("👨‍👩‍👧"), though a name of joiners alone is none. Each service raises
its own error (``bad_name``) with the problem.
"""

from __future__ import annotations

import unicodedata

__all__ = ["MAX_NAME", "ZWJ", "name_problem"]

MAX_NAME = 20
ZWJ = "\u200d"
_REFUSED = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def name_problem(name: str) -> str | None:
    """Why the trimmed ``name`` is not a player name, or None when it is one."""
    if not 1 <= len(name) <= MAX_NAME:
        return f"a name has 1 to {MAX_NAME} characters"
    if any(ch != ZWJ and unicodedata.category(ch) in _REFUSED for ch in name):
        return "a name cannot contain control or format characters"
    if not name.replace(ZWJ, "").strip():
        return "a name needs a visible character"
    return None
