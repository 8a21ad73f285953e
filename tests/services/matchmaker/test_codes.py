from __future__ import annotations

from services.matchmaker.codes import ALPHABET, LENGTH, new_code, normalize_code


def test_alphabet_leaves_out_lookalikes() -> None:
    assert len(ALPHABET) == 32
    assert not set("01IO") & set(ALPHABET)


def test_new_codes_are_six_characters_from_the_alphabet() -> None:
    codes = [new_code() for _ in range(3000)]
    assert all(len(code) == LENGTH and set(code) <= set(ALPHABET) for code in codes)
    assert set("".join(codes)) == set(ALPHABET)
    assert len(set(codes)) > 2990  # 32^6 codes: repeats in 3000 draws are very rare


def test_codes_match_case_insensitively() -> None:
    assert normalize_code("k7mx2q") == "K7MX2Q"
    assert normalize_code("  K7mX2q \n") == "K7MX2Q"


def test_codes_outside_the_alphabet_or_length_are_refused() -> None:
    for raw in ("", "K7MX2", "K7MX2QQ", "K7MX20", "K7MX2I", "K7-X2Q", "K7MX2Ö"):
        assert normalize_code(raw) is None, raw
