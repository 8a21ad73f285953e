"""The ``rackem/v1`` randomness: every chance in a match derives from one 32-byte seed."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence

__all__ = ["Stream", "commitment", "deck_for_round", "first_dealer", "new_seed", "shuffle"]

_PREFIX = b"rackem/v1/"
_TWO64 = 1 << 64
SEED_BYTES = 32


def new_seed() -> bytes:
    """A fresh match seed from the operating system's CSPRNG."""
    return secrets.token_bytes(SEED_BYTES)


class Stream:
    """8-byte big-endian integers from ``SHA-256(seed ‖ "rackem/v1/" ‖ label ‖ counter)``."""

    __slots__ = ("_base", "_buffer", "_counter")

    def __init__(self, seed: bytes, label: str) -> None:
        self._base = seed + _PREFIX + label.encode("ascii")
        self._counter = 0
        self._buffer: list[int] = []

    def next_u64(self) -> int:
        if not self._buffer:
            block = hashlib.sha256(self._base + self._counter.to_bytes(8, "big")).digest()
            self._counter += 1
            self._buffer = [int.from_bytes(block[i : i + 8], "big") for i in (24, 16, 8, 0)]
        return self._buffer.pop()

    def below(self, n: int) -> int:
        """Uniform in ``0..n-1`` by rejection of the biased top of the range."""
        limit = _TWO64 - (_TWO64 % n)
        while True:
            x = self.next_u64()
            if x < limit:
                return x % n


def shuffle(items: Sequence[int], stream: Stream) -> list[int]:
    """Fisher-Yates as docs/rules.md fixes it: for i from N-1 down to 1, swap i and below(i+1)."""
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = stream.below(i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def deck_for_round(seed: bytes, round_no: int, size: int) -> list[int]:
    """The shuffled deck of round ``round_no`` (1-based), top card first."""
    return shuffle(range(1, size + 1), Stream(seed, f"shuffle/{round_no}"))


def first_dealer(seed: bytes, players: int) -> int:
    return Stream(seed, "dealer").below(players)


def commitment(seed: bytes) -> str:
    """``SHA-256(seed)`` in hex, published before the match and checked after."""
    return hashlib.sha256(seed).hexdigest()
