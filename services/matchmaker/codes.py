"""Room codes: six characters from an alphabet without look-alikes, from a CSPRNG.

Codes are only candidates here: the store allocates one collision-free (``SET NX`` with
a TTL), and asks for another on a collision.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

__all__ = ["ALPHABET", "LENGTH", "CodeSource", "new_code", "normalize_code"]

ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
LENGTH = 6

CodeSource = Callable[[], str]
"""Makes a candidate code; tests inject sources that repeat to force collisions."""


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))


def normalize_code(raw: str) -> str | None:
    """The code as stored (upper case, trimmed), or None if it cannot be a room code."""
    code = raw.strip().upper()
    if len(code) != LENGTH or any(c not in ALPHABET for c in code):
        return None
    return code
