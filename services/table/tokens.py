"""Seat tokens: 128 random bits. The table keeps only their SHA-256, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence

__all__ = ["MAX_TOKEN", "is_token_hash", "new_token", "seat_for", "token_hash"]

MAX_TOKEN = 128  # longer strings are refused before hashing
_HEX = frozenset("0123456789abcdef")


def new_token() -> str:
    return secrets.token_hex(16)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def is_token_hash(text: str) -> bool:
    return len(text) == 64 and set(text) <= _HEX


def seat_for(hashes: Sequence[str], token: str) -> int | None:
    """The seat whose hash matches ``token`` (every seat compared, in constant time), or None."""
    if not token or len(token) > MAX_TOKEN:
        return None
    digest = token_hash(token)
    found = None
    for seat, expected in enumerate(hashes):
        if expected and hmac.compare_digest(digest, expected):
            found = seat
    return found
