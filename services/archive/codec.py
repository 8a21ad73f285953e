"""How a record's log is stored: compressed with zlib (standard library) when that is smaller.

A match log is JSON text of 12 to 33 KB (about 22 KB on average over 2 to 4 seats) with
the same few keys over and over: zlib at level 6 makes it about 20 times smaller (~1.1 KB;
~60 µs to compress, ~12 µs to read back), where PostgreSQL's own TOAST compression gets
about 14 times (pglz, ~1.6 KB; lz4 ~3.9 KB) and SQLite none (docs/archive.md,
*Compression*); and the bytes cross the network compressed. So the backends store bytes
and an ``encoding`` beside them: ``zlib``, or ``plain`` UTF-8 for a log that compression
would not shrink. A later encoding (zstd, in Python 3.14's standard library) is one more
name here; the stored rows keep theirs.
"""

from __future__ import annotations

import zlib

__all__ = ["ENCODINGS", "pack", "unpack"]

ENCODINGS = ("zlib", "plain")
_LEVEL = 6


def pack(log_json: str) -> tuple[str, bytes]:
    """``(encoding, data)`` to store for ``log_json``."""
    raw = log_json.encode()
    packed = zlib.compress(raw, _LEVEL)
    return ("zlib", packed) if len(packed) < len(raw) else ("plain", raw)


def unpack(encoding: str, data: bytes) -> str:
    """The log's JSON text back from what ``pack`` made."""
    if encoding == "zlib":
        return zlib.decompress(data).decode()
    if encoding == "plain":
        return data.decode()
    raise ValueError(f"a record stored with an unknown encoding {encoding!r}")
