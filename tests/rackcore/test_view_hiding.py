"""Property tests: a view depends on what its seat may know, and on nothing else."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rackcore import SPECTATOR, Match, Move, Rules, View, observe

Deck = Callable[..., list[int]]
PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PLAYOUT = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def table_rules(draw: st.DrawFn, reshuffle: bool = False) -> Rules:
    players = draw(st.integers(2, 4))
    return Rules(
        players=players,
        target=draw(st.sampled_from([50, 100, 300])),
        partners=players == 4 and draw(st.booleans()),
        bonus=draw(st.booleans()),
        descending=draw(st.booleans()),
        repair_token=draw(st.booleans()),
        visible_center=draw(st.booleans()),
        reshuffle_on_recycle=reshuffle and draw(st.booleans()),
        max_recycles=draw(st.integers(0, 3)),
        turn_cap=50,
    )


def _pick(match: Match, rnd: random.Random, stays_in: int | None = None) -> Move:
    """A random legal move; seats other than ``stays_in`` never go out when it is given."""
    moves = match.legal_moves()
    if stays_in is not None and match.turn != stays_in:
        moves = tuple(m for m in moves if m.go_out is False or m.act in ("draw", "repair"))
    return moves[rnd.randrange(len(moves))]


def _cards_placed(view: View) -> set[int]:
    """The cards a view shows where they are now (not the round's history of moves)."""
    found: set[int] = set(view.rack) | set(view.discard) | set(view.stock_known or ())
    found |= {c for c in view.center if c is not None}
    found |= {c for row in view.known for c in row if c is not None}
    found |= {c for row in view.racks or () for c in row}
    if view.held is not None:
        found.add(view.held)
    return found


def _entitled(match: Match, seat: int) -> set[int]:
    """The cards ``seat`` may know now, from the rules (not from the view code)."""
    known = set(match.racks[seat]) | set(match.discard)
    if match.held is not None and (match.turn == seat or match.held_from == "discard"):
        known.add(match.held)
    if match.rules.visible_center:
        known |= {rack[4] for rack in match.racks}
    if match.phase in ("round_over", "match_over"):
        known |= {c for rack in match.racks for c in rack}
    return known


@PROPERTY
@given(
    rules=table_rules(),
    data=st.data(),
    rnd=st.randoms(use_true_random=False),
)
def test_states_that_differ_only_in_hidden_cards_give_a_seat_the_same_view(
    deck: Deck, rules: Rules, data: st.DataObject, rnd: random.Random
) -> None:
    n, size = rules.players, rules.deck_size
    seat = data.draw(st.integers(0, n - 1), label="seat")
    dealer = data.draw(st.integers(0, n - 1), label="dealer")
    first = data.draw(st.permutations(range(1, size + 1)), label="deck")
    steps = data.draw(st.integers(0, 150), label="steps")

    a = Match(rules, decks=[list(first)], dealer=dealer)
    views, entitled = [observe(a, seat)], _entitled(a, seat)
    moves: list[Move] = []
    while len(moves) < steps and a.phase in ("draw", "resolve"):
        move = _pick(a, rnd, stays_in=seat)
        a.apply(move)
        moves.append(move)
        views.append(observe(a, seat))
        entitled |= _entitled(a, seat)

    hidden = sorted(set(range(1, size + 1)) - entitled)
    swapped = dict(zip(hidden, data.draw(st.permutations(hidden), label="hidden"), strict=True))
    b = Match(rules, decks=[[swapped.get(c, c) for c in first]], dealer=dealer)
    assert observe(b, seat) == views[0]
    for move, view in zip(moves, views[1:], strict=True):
        b.apply(move)
        assert observe(b, seat) == view


@PLAYOUT
@given(
    rules=table_rules(reshuffle=True),
    seed=st.binary(min_size=32, max_size=32),
    rnd=st.randoms(use_true_random=False),
)
def test_no_view_carries_the_seed_or_a_hidden_stock_order_before_the_end(
    rules: Rules, seed: bytes, rnd: random.Random
) -> None:
    match = Match(rules, seed)
    for _ in range(250):
        # The stock's order is hidden: the same table with the stock reversed looks the same.
        other = copy.deepcopy(match)
        other.stock = other.stock[::-1]
        for seat in range(rules.players):
            view = observe(match, seat).to_dict()
            text = json.dumps(view)
            if match.phase != "match_over":
                assert seed.hex() not in text
            if not match.stock_public and len(match.stock) >= 2:
                assert observe(other, seat).to_dict() == view
        if match.phase == "match_over":
            assert seed.hex() in text
            break
        match.apply(_pick(match, rnd))


@PLAYOUT
@given(
    rules=table_rules(reshuffle=True),
    seed=st.binary(min_size=32, max_size=32),
    rnd=st.randoms(use_true_random=False),
)
def test_a_view_never_carries_another_seats_hidden_cards_before_the_reveal(
    rules: Rules, seed: bytes, rnd: random.Random
) -> None:
    match = Match(rules, seed)
    for _ in range(300):
        if match.phase == "match_over":
            break
        if match.phase == "round_over":
            match.apply(_pick(match, rnd))
            continue
        for seat in range(rules.players):
            view = observe(match, seat)
            assert view.racks is None
            shown = _cards_placed(view)
            for other in range(rules.players):
                if other != seat:
                    public = {c for c in view.known[other] if c is not None}
                    if rules.visible_center:
                        public.add(match.racks[other][4])
                    assert shown & set(match.racks[other]) <= public
            if match.turn != seat and match.held_from == "stock":
                assert view.held is None
                assert match.held not in shown
        match.apply(_pick(match, rnd))


def _public(match: Match) -> set[int]:
    """The cards every seat may know now: all a spectator may ever be shown of this moment
    (what every seat was dealt or saw, the pickups placed in view, a stock formed in view)."""
    known = {c for row in match.known for c in row if c is not None}
    if match.stock_public:
        known |= set(match.stock)
    return known | set.intersection(*(_entitled(match, seat) for seat in range(match.players)))


@PROPERTY
@given(
    rules=table_rules(),
    data=st.data(),
    rnd=st.randoms(use_true_random=False),
)
def test_states_that_differ_in_any_card_a_seat_cannot_see_give_a_spectator_the_same_view(
    deck: Deck, rules: Rules, data: st.DataObject, rnd: random.Random
) -> None:
    n, size = rules.players, rules.deck_size
    dealer = data.draw(st.integers(0, n - 1), label="dealer")
    first = data.draw(st.permutations(range(1, size + 1)), label="deck")
    steps = data.draw(st.integers(0, 150), label="steps")

    a = Match(rules, decks=[list(first)], dealer=dealer)
    views, public = [observe(a, SPECTATOR)], _public(a)
    moves: list[Move] = []
    while len(moves) < steps and a.phase in ("draw", "resolve"):
        move = _pick(a, rnd, stays_in=SPECTATOR)  # nobody goes out: every rack is hidden
        a.apply(move)
        moves.append(move)
        views.append(observe(a, SPECTATOR))
        public |= _public(a)

    hidden = sorted(set(range(1, size + 1)) - public)
    swapped = dict(zip(hidden, data.draw(st.permutations(hidden), label="hidden"), strict=True))
    b = Match(rules, decks=[[swapped.get(c, c) for c in first]], dealer=dealer)
    assert observe(b, SPECTATOR) == views[0]
    for move, view in zip(moves, views[1:], strict=True):
        b.apply(move)
        assert observe(b, SPECTATOR) == view


@PLAYOUT
@given(
    rules=table_rules(reshuffle=True),
    seed=st.binary(min_size=32, max_size=32),
    rnd=st.randoms(use_true_random=False),
)
def test_a_spectator_sees_no_rack_no_held_stock_card_no_stock_order_and_no_seed_before_the_end(
    rules: Rules, seed: bytes, rnd: random.Random
) -> None:
    match = Match(rules, seed)
    for _ in range(300):
        view = observe(match, SPECTATOR)
        text = json.dumps(view.to_dict())
        assert view.seat == SPECTATOR and view.rack == () and not view.my_turn
        assert view.legal_moves() == ()
        if match.phase == "match_over":
            assert seed.hex() in text
            break
        assert seed.hex() not in text
        if not match.stock_public and len(match.stock) >= 2:
            # The stock's order is hidden: the same table with the stock reversed looks the same.
            other = copy.deepcopy(match)
            other.stock = other.stock[::-1]
            assert observe(other, SPECTATOR).to_dict() == view.to_dict()
        if match.held_from == "stock":
            assert view.held is None
        if match.phase != "round_over":
            assert view.racks is None
            assert _cards_placed(view) <= _public(match)
        match.apply(_pick(match, rnd))
