"""Table ids and seat tokens. Tokens are 128 random bits; only their SHA-256 is stored."""

from __future__ import annotations

import hashlib
import secrets

__all__ = ["hash_token", "new_table_id", "new_token", "normalize_token"]


def new_table_id() -> str:
    """``t`` + 16 hex characters."""
    return "t" + secrets.token_hex(8)


def new_token() -> str:
    """A seat token: 32 hex characters."""
    return secrets.token_hex(16)


def hash_token(token: str) -> str:
    """The hex SHA-256 of a token: what the matchmaker and the table store."""
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def normalize_token(raw: str) -> str | None:
    """The token in lower case, or None if it is not 32 hex characters."""
    token = raw.strip().lower()
    if len(token) != 32 or any(c not in "0123456789abcdef" for c in token):
        return None
    return token
