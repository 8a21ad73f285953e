"""How a record's log is stored (services/archive/codec.py)."""

from __future__ import annotations

import json

import pytest

from services.archive.codec import pack, unpack


def test_a_match_log_is_stored_compressed_and_read_back_as_it_was() -> None:
    moves = [{"seat": i % 2, "act": "draw", "from": "stock"} for i in range(400)]
    log = json.dumps({"format": "rackem-match/1", "moves": moves, "name": "Zoë"})
    encoding, data = pack(log)
    assert encoding == "zlib" and len(data) * 10 < len(log.encode())
    assert unpack(encoding, data) == log


def test_what_compression_would_not_shrink_is_stored_plain() -> None:
    assert pack("{}") == ("plain", b"{}")
    assert unpack("plain", b"{}") == "{}"


def test_an_unknown_encoding_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown encoding"):
        unpack("zstd", b"")
