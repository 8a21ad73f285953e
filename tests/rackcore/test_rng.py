from __future__ import annotations

import hashlib

import pytest

from rackcore import Stream, commitment, deck_for_round, first_dealer, new_seed, shuffle

SEED = bytes(31) + b"\x01"
DECK_2P = [6, 20, 30, 39, 15, 24, 10, 29, 27, 22, 12, 31, 28, 40, 26, 35, 23, 34, 21, 38]
DECK_2P += [9, 8, 13, 17, 1, 11, 25, 3, 33, 18, 7, 37, 36, 2, 14, 16, 4, 19, 32, 5]


def test_stream_shuffle_1_matches_the_test_vector() -> None:
    stream = Stream(SEED, "shuffle/1")
    first = [stream.next_u64() for _ in range(3)]
    assert first == [0x9B7D8CD1C6505214, 0xE94B9BD10964065A, 0xFB81DC2CB4813738]


def test_stream_reads_four_big_endian_integers_per_block_then_counts_up() -> None:
    def block(counter: int) -> bytes:
        data = SEED + b"rackem/v1/" + b"dealer" + counter.to_bytes(8, "big")
        return hashlib.sha256(data).digest()

    expected = [int.from_bytes(block(c)[i : i + 8], "big") for c in (0, 1) for i in (0, 8, 16, 24)]
    stream = Stream(SEED, "dealer")
    assert [stream.next_u64() for _ in range(8)] == expected


def test_streams_of_different_labels_differ() -> None:
    assert Stream(SEED, "shuffle/1").next_u64() != Stream(SEED, "shuffle/2").next_u64()


class _Scripted(Stream):
    """A stream that yields given integers, to pin ``below``'s rejection rule."""

    def __init__(self, values: list[int]) -> None:
        super().__init__(SEED, "scripted")
        self._values = values

    def next_u64(self) -> int:
        return self._values.pop(0)


def test_below_rejects_the_biased_top_of_the_range() -> None:
    two64 = 1 << 64
    limit = two64 - two64 % 10  # 2^64 - 6: the values from here up would favour 0..5
    stream = _Scripted([two64 - 1, limit, limit - 1, 23])
    assert stream.below(10) == 9  # the first two are discarded, (2^64 - 7) mod 10 = 9
    assert stream.below(10) == 3


def test_below_keeps_the_largest_unbiased_value() -> None:
    assert _Scripted([(1 << 64) - 1]).below(2) == 1
    assert _Scripted([(1 << 64) - 1]).below(1) == 0


@pytest.mark.parametrize(("players", "dealer"), [(2, 0), (3, 1), (4, 2)])
def test_first_dealer_matches_the_test_vector(players: int, dealer: int) -> None:
    assert first_dealer(SEED, players) == dealer


def test_round_1_deck_with_two_players_matches_the_test_vector() -> None:
    assert deck_for_round(SEED, 1, 40) == DECK_2P


def test_shuffle_swaps_i_with_below_i_plus_1_from_the_top_down() -> None:
    stream = Stream(SEED, "shuffle/1")
    expected = list(range(1, 41))
    for i in range(39, 0, -1):
        j = stream.below(i + 1)
        expected[i], expected[j] = expected[j], expected[i]
    assert shuffle(range(1, 41), Stream(SEED, "shuffle/1")) == expected == DECK_2P


def test_each_round_has_its_own_permutation_of_the_deck() -> None:
    decks = [deck_for_round(SEED, r, 60) for r in (1, 2, 3)]
    for deck in decks:
        assert sorted(deck) == list(range(1, 61))
    assert decks[0] != decks[1] != decks[2]
    assert deck_for_round(SEED, 2, 60) == decks[1]


def test_shuffle_does_not_change_its_input() -> None:
    items = [5, 6, 7, 8]
    assert sorted(shuffle(items, Stream(SEED, "x"))) == [5, 6, 7, 8]
    assert items == [5, 6, 7, 8]


def test_commitment_matches_the_test_vector() -> None:
    assert commitment(SEED) == "ec4916dd28fc4c10d78e287ca5d9cc51ee1ae73cbfde08c6b37324cbfaac8bc5"


def test_new_seeds_are_32_fresh_bytes() -> None:
    seeds = {new_seed() for _ in range(8)}
    assert len(seeds) == 8
    assert all(len(seed) == 32 for seed in seeds)
