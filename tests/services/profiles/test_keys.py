"""A profile's secrets (services/profiles/keys.py): their spelling, and what is stored."""

from __future__ import annotations

import hashlib

from services.profiles import keys


def test_keys_are_128_bits_and_stored_as_their_sha256() -> None:
    key = keys.new_key()
    assert keys.is_key(key) and len(key) == 32 and key == key.lower()
    assert keys.new_key() != key
    assert keys.hash_key(key) == hashlib.sha256(key.encode()).digest()
    assert not keys.is_key(key.upper()) and not keys.is_key(key[:-1]) and not keys.is_key("")


def test_profile_ids_are_p_and_64_bits() -> None:
    profile_id = keys.new_profile_id()
    assert keys.is_profile_id(profile_id) and len(profile_id) == 17
    assert not keys.is_profile_id("P" + profile_id[1:])


def test_link_codes_have_no_look_alikes_and_hash_in_upper_case() -> None:
    codes = {keys.new_link_code() for _ in range(500)}
    assert len(codes) > 490
    assert all(len(code) == 6 and set(code) <= set(keys.LINK_ALPHABET) for code in codes)
    assert not set("01OI") & set(keys.LINK_ALPHABET)
    code = codes.pop()
    assert keys.is_link_code(code) and keys.is_link_code(code.lower())
    assert keys.hash_link_code(code.lower()) == hashlib.sha256(code.encode()).digest()
    assert not keys.is_link_code("ABC10O") and not keys.is_link_code("ABCDE")
