"""rackcore values ⇄ protobuf: a view survives the trip whole, for every seat of any match."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rackcore import Match, Rules, observe
from services.convert import reseat_view, rules_from_pb, rules_to_pb, view_from_pb, view_to_pb
from tests.services.gateway.test_view_message import table_rules

PLAYOUT = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# A playout's choices come from one drawn seed, not a draw per move: a whole match's
# worth of draws overran Hypothesis's data now and then, which failed the
# ``data_too_large`` health check at random.
PICKS = st.integers(0, 2**32 - 1)


@PLAYOUT
@given(rules=table_rules(), seed=st.binary(min_size=32, max_size=32), picks=PICKS)
def test_every_seats_view_comes_back_from_its_message_unchanged(
    rules: Rules, seed: bytes, picks: int
) -> None:
    pick = random.Random(picks)
    match = Match(rules, seed)
    seen = 0
    while True:
        if match.phase == "round_over" or pick.random() < 0.2 or match.phase == "match_over":
            for seat in range(rules.players):
                view = observe(match, seat)
                assert view_from_pb(view_to_pb(view)) == view
                seen += 1
        if match.phase == "match_over":
            break
        if match.phase == "round_over":
            match.next_round()
            continue
        legal = match.legal_moves()
        match.apply(legal[pick.randrange(len(legal))])
    assert seen >= rules.players


def test_rules_messages_are_made_once_and_never_shared_with_a_view() -> None:
    rules = Rules(players=3, bonus=True)
    first = view_to_pb(observe(Match(rules, bytes(32)), 0))
    second = view_to_pb(observe(Match(rules, bytes(32)), 1))
    first.rules.target = 1  # a view's rules are its own copy
    assert second.rules == rules_to_pb(rules)
    assert rules_from_pb(second.rules) == rules


@PLAYOUT
@given(rules=table_rules(), seed=st.binary(min_size=32, max_size=32), picks=PICKS)
def test_a_message_reseated_for_another_seat_is_that_seats_own_message(
    rules: Rules, seed: bytes, picks: int
) -> None:
    pick = random.Random(picks)
    match = Match(rules, seed)
    reseated = 0
    while match.phase != "match_over":
        views = [observe(match, seat) for seat in range(rules.players)]
        for a in range(rules.players):
            for b in range(rules.players):
                msg = view_to_pb(views[a])
                if reseat_view(msg, views[a], views[b]):
                    assert msg == view_to_pb(views[b])  # never a card of seat a's left over
                    reseated += a != b
                else:
                    assert msg == view_to_pb(views[a])  # left as it was
        if match.phase == "round_over":
            match.next_round()
            continue
        legal = match.legal_moves()
        match.apply(legal[pick.randrange(len(legal))])
    assert reseated > 0  # mid-round, seats differ only in their own fields
