"""The gateway's ``view`` message is, byte for byte, the one built through rackcore's ``View``."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rackcore import SPECTATOR, Match, Rules, RulesError
from services._gen.rackem.v1 import game_pb2 as pb
from services.convert import view_from_pb
from services.gateway import messages
from services.gateway.messages import _last_move
from services.gateway.protocol import encode, schemas
from services.table.stored import SeatMeta, TableMeta, TableState
from services.table.views import seat_infos, table_view

PLAYOUT = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NOW = 1_700_000_000_000
STATUS = {"draw": "playing", "resolve": "playing", "round_over": "round_over"}


def reference_view(msg: pb.TableView) -> dict[str, Any]:
    """The ``view`` message as the gateway built it through rackcore's ``View`` (the reference)."""
    seat_view = view_from_pb(msg.view)
    legal = []
    for move in seat_view.legal_moves():
        if move.go_out:
            entry = move.to_dict()
            del entry["seat"]
            legal.append(entry)
    return {
        "type": "view",
        "table_id": msg.table_id,
        "code": msg.code,
        "version": msg.version,
        "status": msg.status,
        "seats": [
            {
                "seat": s.seat,
                "name": s.name,
                "kind": s.kind,
                "connected": s.connected,
                "level": s.level,
                "left": s.left,
            }
            for s in msg.seats
        ],
        "deadline_ms": max(0, msg.deadline_ms),
        "remaining_ms": max(0, msg.remaining_ms),
        "continue_deadline_ms": max(0, msg.continue_deadline_ms),
        "continued": list(msg.continued),
        "last_move": _last_move(msg),
        "ended_reason": msg.ended_reason,
        "legal": legal,
        "view": seat_view.to_dict(),
        "watchers": msg.watchers,
    }


@st.composite
def table_rules(draw: st.DrawFn) -> Rules:
    players = draw(st.integers(2, 4))
    return Rules(
        players=players,
        target=50,
        partners=players == 4 and draw(st.booleans()),
        bonus=draw(st.booleans()),
        run_to_go_out=draw(st.sampled_from([None, 0, 3, 5])),
        descending=draw(st.booleans()),
        repair_token=draw(st.booleans()),
        visible_center=draw(st.booleans()),
        reshuffle_on_recycle=draw(st.booleans()),
        max_recycles=draw(st.integers(0, 3)),
        turn_cap=50,
        tiebreak=draw(st.sampled_from(["went_out", "extra_round"])),
    )


class Table:
    """A match with the table's facts around it, to build each seat's ``TableView`` as it does."""

    def __init__(self, rules: Rules, seed: bytes, rnd: random.Random) -> None:
        self.match = Match(rules, seed)
        self.rnd = rnd
        self.meta = TableMeta(
            table_id="t0123456789abcdef",
            code="K7MX2Q",
            rules=rules.to_dict(),
            seed=seed.hex(),
            seats=tuple(
                SeatMeta(name=f"Név{n} 🎲", bot=n % 2 == 1, level="hard", token_hash="")
                for n in range(rules.players)
            ),
            created_ms=NOW,
        )
        self.state = TableState.new(rules.players)

    def views(self) -> list[pb.TableView]:
        """Every seat's view now, and a spectator's, with varied clocks, seat kinds,
        connections and watchers."""
        rnd, match, state = self.rnd, self.match, self.state
        state.status = STATUS.get(match.phase, "finished")
        state.ended_reason = "finished" if state.status == "finished" else ""
        state.deadline_ms = rnd.choice([0, NOW - 4000, NOW + 25_000])
        state.continue_deadline_ms = rnd.choice([0, NOW + 10_000])
        state.continued = [rnd.random() < 0.5 for _ in state.continued]
        state.left = [rnd.random() < 0.1 for _ in state.left]
        kinds = [rnd.choice(["human", "bot", "cover"]) for _ in self.meta.seats]
        connected = [rnd.random() < 0.8 for _ in self.meta.seats]
        seats = seat_infos(self.meta, kinds, connected, state)
        out = []
        watchers = rnd.choice([0, 0, 1, 7])
        for seat in (*range(match.players), SPECTATOR):
            msg = table_view(self.meta, match, state, seats, seat, NOW)
            msg.watchers = watchers
            if rnd.random() < 0.05:  # clocks from a skewed replica: the message clamps them
                msg.deadline_ms, msg.remaining_ms, msg.continue_deadline_ms = -1, -250, -9
            out.append(msg)
        return out

    def play(self) -> None:
        """A random legal move (sometimes, at a round's end, the next deal on its own first)."""
        match = self.match
        if match.phase == "round_over" and self.rnd.random() < 0.3:
            match.next_round()
            return
        legal = match.legal_moves()
        match.apply(legal[self.rnd.randrange(len(legal))].with_by(self.rnd.choice(["human", None])))


def positions(rules: Rules, seed: bytes, rnd: random.Random) -> list[pb.TableView]:
    """Views of one whole match: every seat at about one move in eight, and at every round end."""
    table = Table(rules, seed, rnd)
    out = table.views()
    while table.match.phase != "match_over":
        table.play()
        if table.match.phase == "round_over" or rnd.random() < 0.125:
            out.extend(table.views())
    out.extend(table.views())
    return out


@PLAYOUT
@given(rules=table_rules(), seed=st.binary(min_size=32, max_size=32), play=st.integers(0, 2**32))
def test_the_view_message_is_the_reference_message_for_every_seat(
    rules: Rules, seed: bytes, play: int
) -> None:
    for msg in positions(rules, seed, random.Random(play)):
        assert encode(messages.view(msg)) == encode(reference_view(msg))


def test_the_positions_cover_every_phase_and_legal_move() -> None:
    rules = Rules(players=3, bonus=True, repair_token=True, target=50, turn_cap=50)
    views = positions(rules, bytes(range(32)), random.Random(7))
    phases = {msg.view.phase for msg in views}
    assert phases == {"draw", "resolve", "round_over", "match_over"}
    acts = {entry["act"] for msg in views for entry in messages.view(msg)["legal"]}
    assert acts == {"draw", "place", "throw", "repair"}
    for msg in views:
        assert messages.view(msg) == reference_view(msg)


def test_a_view_message_matches_its_schema_and_changing_it_changes_no_later_message() -> None:
    rules = Rules(players=2, repair_token=True, target=50, turn_cap=50)
    table = Table(rules, bytes(32), random.Random(3))
    while table.match.phase != "resolve" or not table.match.repair_tokens[table.match.turn]:
        table.play()
    msg = table.views()[table.match.turn]
    first = messages.view(msg)
    assert schemas()["view"].error(first) is None
    assert any(entry["act"] == "repair" for entry in first["legal"])
    first["view"]["rules"]["target"] = 0
    first["legal"][0]["act"] = "changed"
    first["legal"].clear()
    assert messages.view(msg) == reference_view(msg)


def test_rules_no_view_can_hold_are_refused_as_before() -> None:
    msg = Table(Rules(players=2), bytes(32), random.Random(1)).views()[0]
    msg.view.rules.target = 1
    with pytest.raises(RulesError) as expected:
        reference_view(msg)
    with pytest.raises(RulesError, match=re.escape(str(expected.value))):
        messages.view(msg)


def test_a_spectators_view_message_has_no_rack_offers_no_move_and_matches_its_schema() -> None:
    rules = Rules(players=3, repair_token=True, target=50, turn_cap=50)
    views = positions(rules, bytes(range(32)), random.Random(11))
    spectators = [messages.view(msg) for msg in views if msg.view.seat == SPECTATOR]
    assert {m["view"]["phase"] for m in spectators} == {
        "draw",
        "resolve",
        "round_over",
        "match_over",
    }
    for message in spectators:
        assert schemas()["view"].error(message) is None
        assert message["legal"] == [] and message["view"]["rack"] == []
        assert message["view"]["seat"] == -1
