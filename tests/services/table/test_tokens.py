from __future__ import annotations

import hashlib

from services.table.tokens import is_token_hash, new_token, seat_for, token_hash


def test_a_new_token_is_128_random_bits_in_hex() -> None:
    tokens = {new_token() for _ in range(100)}
    assert len(tokens) == 100
    assert all(len(t) == 32 and int(t, 16) >= 0 for t in tokens)


def test_the_table_keeps_the_sha256_of_a_token() -> None:
    token = new_token()
    assert token_hash(token) == hashlib.sha256(token.encode()).hexdigest()
    assert is_token_hash(token_hash(token))
    assert not is_token_hash(token)
    assert not is_token_hash("G" * 64)


def test_a_token_finds_its_own_seat_only() -> None:
    tokens = [new_token(), new_token(), new_token()]
    hashes = [token_hash(t) for t in tokens]
    assert [seat_for(hashes, t) for t in tokens] == [0, 1, 2]
    assert seat_for(hashes, new_token()) is None


def test_bot_seats_without_a_hash_match_no_token() -> None:
    assert seat_for(["", token_hash("x")], "") is None
    assert seat_for(["", token_hash("x")], "x") == 1


def test_an_overlong_token_is_refused_unhashed() -> None:
    long_token = "a" * 129
    assert seat_for([token_hash(long_token)], long_token) is None
