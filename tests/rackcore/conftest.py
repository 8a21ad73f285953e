"""Stacked decks: build exact positions by dealing a deck chosen card by card."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pytest

from rackcore import Match, Rules

SLOTS = 10
# A zigzag over ten sorted cards: neither increasing nor decreasing, so never a winning rack.
_ZIGZAG = (9, 0, 8, 1, 7, 2, 6, 3, 5, 4)


def stack_deck(
    players: int,
    dealer: int,
    racks: Mapping[int, Sequence[int]],
    discard: int | None = None,
    stock: Sequence[int] = (),
) -> list[int]:
    """The deck (top first) that deals ``racks`` (index 0..9), ``discard`` and then ``stock``.

    Seats not in ``racks`` get leftover cards in a zigzag (never a winning rack); a
    missing discard takes the next leftover; leftovers follow ``stock`` in order.
    """
    size = 10 * players + 20
    chosen = [c for rack in racks.values() for c in rack] + list(stock)
    if discard is not None:
        chosen.append(discard)
    if len(set(chosen)) != len(chosen) or not set(chosen) <= set(range(1, size + 1)):
        raise ValueError("stacked cards must be distinct cards of the deck")
    leftovers = iter(sorted(set(range(1, size + 1)) - set(chosen)))
    full: dict[int, list[int]] = {}
    for seat in range(players):
        if seat in racks:
            if len(racks[seat]) != SLOTS:
                raise ValueError("a rack holds ten cards")
            full[seat] = list(racks[seat])
        else:
            ten = [next(leftovers) for _ in range(SLOTS)]
            full[seat] = [ten[i] for i in _ZIGZAG]
    deck = [0] * (SLOTS * players)
    for pos in range(SLOTS * players):
        seat = (dealer + 1 + pos % players) % players
        deck[pos] = full[seat][SLOTS - 1 - pos // players]
    top = discard if discard is not None else next(leftovers)
    return [*deck, top, *stock, *leftovers]


def stacked_match(
    rules: Rules | None = None,
    *,
    dealer: int = 0,
    racks: Mapping[int, Sequence[int]] | None = None,
    discard: int | None = None,
    stock: Sequence[int] = (),
    later: Sequence[Sequence[int]] = (),
) -> Match:
    """A match whose first round deals exactly this; ``later`` are the decks of later rounds."""
    rules = rules or Rules()
    deck = stack_deck(rules.players, dealer, racks or {}, discard, stock)
    return Match(rules, decks=[deck, *(list(d) for d in later)], dealer=dealer)


@pytest.fixture(scope="session")
def stacked() -> Callable[..., Match]:
    return stacked_match


@pytest.fixture(scope="session")
def deck() -> Callable[..., list[int]]:
    return stack_deck
