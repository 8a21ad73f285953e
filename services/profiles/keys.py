"""A profile's secrets: its id, its keys and its link codes, and how the store keeps them.

A key is 128 random bits (32 lowercase hex digits), sent to its device once and stored
only as its SHA-256: a database read gives nobody a key. A link code is 6 characters from
an alphabet without look-alikes (no 0/O, no 1/I), one-time and valid ``LINK_CODE_TTL_MS``,
stored as the SHA-256 of its upper-case spelling. A profile id is ``"p"`` and 64 random
bits in hex. None of them ever goes into a log line.
"""

from __future__ import annotations

import hashlib
import re
import secrets

__all__ = [
    "LINK_ALPHABET",
    "LINK_CODE_LENGTH",
    "LINK_CODE_TTL_MS",
    "hash_key",
    "hash_link_code",
    "is_key",
    "is_link_code",
    "is_profile_id",
    "new_key",
    "new_link_code",
    "new_profile_id",
]

LINK_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
LINK_CODE_LENGTH = 6
LINK_CODE_TTL_MS = 5 * 60_000
_KEY = re.compile(r"[0-9a-f]{32}")
_PROFILE_ID = re.compile(r"p[0-9a-f]{16}")


def new_profile_id() -> str:
    return "p" + secrets.token_hex(8)


def is_profile_id(text: str) -> bool:
    return _PROFILE_ID.fullmatch(text) is not None


def new_key() -> str:
    """A new key (128 bits): for one device, sent to it once."""
    return secrets.token_hex(16)


def is_key(text: str) -> bool:
    """Whether ``text`` is spelled as a key is (a wrong one is still refused by the store)."""
    return _KEY.fullmatch(text) is not None


def hash_key(key: str) -> bytes:
    """What the store keeps of a key: its SHA-256."""
    return hashlib.sha256(key.encode()).digest()


def new_link_code() -> str:
    """A new one-time link code (about 30 bits: guessing is stopped by its 5 minutes,
    its single use and the gateway's rate limit on look-ups)."""
    return "".join(secrets.choice(LINK_ALPHABET) for _ in range(LINK_CODE_LENGTH))


def is_link_code(text: str) -> bool:
    """Whether ``text`` is spelled as a link code (either case)."""
    code = text.upper()
    return len(code) == LINK_CODE_LENGTH and all(ch in LINK_ALPHABET for ch in code)


def hash_link_code(code: str) -> bytes:
    """What the store keeps of a link code: the SHA-256 of its upper-case spelling."""
    return hashlib.sha256(code.upper().encode()).digest()
