from __future__ import annotations

import hashlib
import re

from services.matchmaker.ids import hash_token, new_table_id, new_token, normalize_token


def test_table_ids_are_t_and_16_hex() -> None:
    ids = {new_table_id() for _ in range(500)}
    assert len(ids) == 500
    assert all(re.fullmatch(r"t[0-9a-f]{16}", i) for i in ids)


def test_tokens_are_128_random_bits_in_hex() -> None:
    tokens = {new_token() for _ in range(500)}
    assert len(tokens) == 500
    assert all(re.fullmatch(r"[0-9a-f]{32}", t) for t in tokens)


def test_token_hash_is_hex_sha256() -> None:
    token = new_token()
    assert hash_token(token) == hashlib.sha256(token.encode()).hexdigest()


def test_normalize_token_takes_32_hex_characters_only() -> None:
    token = new_token()
    assert normalize_token(token.upper()) == token
    assert normalize_token(token + "0") is None
    assert normalize_token(token[:-1] + "g") is None
    assert normalize_token("") is None
