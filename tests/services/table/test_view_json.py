"""Each seat's ``view`` message leaves the table as JSON made once, whole: the table's public
facts, ``observe(match, seat).to_dict()`` and the seat's legal moves, for every seat and a
spectator; the gateway sends that text as it is."""

from __future__ import annotations

import json
import random
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rackcore import SPECTATOR, Match, Rules, View, observe
from services._gen.rackem.v1 import game_pb2 as pb
from services.gateway.protocol import schemas
from services.table.stored import SeatMeta, TableMeta, TableState
from services.table.views import seat_facts, table_views
from table.decoded import message_of, view_of

PLAYOUT = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HIDING = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NOW = 1_700_000_000_000
STATUS = {"draw": "playing", "resolve": "playing", "round_over": "round_over"}


def reference_legal(view: View) -> list[dict[str, Any]]:
    """The protocol's ``legal`` list from rackcore: the go-out forms, without ``seat``."""
    out = []
    for move in view.legal_moves():
        if move.go_out:
            entry = move.to_dict()
            del entry["seat"]
            out.append(entry)
    return out


def reference_last_move(match: Match) -> dict[str, Any] | None:
    """The last move as every seat may see it, from rackcore's log form: no card."""
    if not match.history:
        return None
    entry = match.history[-1].to_dict()
    out = {"seat": entry["seat"], "act": entry["act"]}
    for name in ("from", "slot", "by"):
        if entry.get(name) is not None:
            out[name] = entry[name]
    return out


def reference_message(table: Table, view: View) -> dict[str, Any]:
    """The ``view`` message (docs/protocol.md) from the table's facts and rackcore's ``View``."""
    state, meta = table.state, table.meta
    round_over = state.status == "round_over"
    return {
        "type": "view",
        "table_id": meta.table_id,
        "code": meta.code,
        "version": len(table.match.history),
        "status": state.status,
        "seats": [
            {
                "seat": n,
                "name": spec.name,
                "kind": table.kinds[n],
                "connected": table.connected[n],
                "level": spec.level if table.kinds[n] != "human" else "",
                "left": state.left[n],
            }
            for n, spec in enumerate(meta.seats)
        ],
        "deadline_ms": max(0, state.deadline_ms),
        "remaining_ms": max(0, state.deadline_ms - NOW) if state.deadline_ms else 0,
        "continue_deadline_ms": max(0, state.continue_deadline_ms) if round_over else 0,
        "continued": state.continued if round_over else [],
        "last_move": reference_last_move(table.match),
        "ended_reason": state.ended_reason,
        "legal": reference_legal(view),
        "view": view.to_dict(),
        "watchers": table.watchers,
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

    kinds: list[str]
    connected: list[bool]
    watchers: int

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

    def views(self) -> list[tuple[pb.TableView, View]]:
        """Every seat's ``TableView`` now, and a spectator's, with varied clocks, seat kinds,
        connections and watchers; each with ``observe``'s view of that seat now."""
        rnd, match, state = self.rnd, self.match, self.state
        state.status = STATUS.get(match.phase, "finished")
        state.ended_reason = "finished" if state.status == "finished" else ""
        state.deadline_ms = rnd.choice([0, NOW - 4000, NOW + 25_000])
        state.continue_deadline_ms = rnd.choice([0, NOW + 10_000])
        if rnd.random() < 0.05:  # clocks from a skewed replica: the message clamps them
            state.deadline_ms, state.continue_deadline_ms = -1, -9
        state.continued = [rnd.random() < 0.5 for _ in state.continued]
        state.left = [rnd.random() < 0.1 for _ in state.left]
        self.kinds = [rnd.choice(["human", "bot", "cover"]) for _ in self.meta.seats]
        self.connected = [rnd.random() < 0.8 for _ in self.meta.seats]
        seats = seat_facts(self.meta, self.kinds, self.connected, state)
        wanted = [*range(match.players), SPECTATOR]
        rnd.shuffle(wanted)
        self.watchers = rnd.choice([0, 0, 1, 7])
        made = table_views(self.meta, match, state, seats, wanted, NOW, self.watchers)
        assert set(made) == set(wanted)
        return [(msg, observe(match, seat)) for seat, msg in made.items()]

    def play(self) -> None:
        """A random legal move (sometimes, at a round's end, the next deal on its own first)."""
        match = self.match
        if match.phase == "round_over" and self.rnd.random() < 0.3:
            match.next_round()
            return
        legal = match.legal_moves()
        match.apply(legal[self.rnd.randrange(len(legal))].with_by(self.rnd.choice(["human", None])))


Made = tuple[pb.TableView, View, dict[str, Any]]
"""A ``TableView``, ``observe``'s view of its seat, and the reference message it must carry."""


def positions(rules: Rules, seed: bytes, rnd: random.Random) -> list[Made]:
    """Views of one whole match: every seat at about one move in eight, and at every round end."""
    table = Table(rules, seed, rnd)

    def now() -> list[Made]:
        return [(msg, view, reference_message(table, view)) for msg, view in table.views()]

    out = now()
    while table.match.phase != "match_over":
        table.play()
        if table.match.phase == "round_over" or rnd.random() < 0.125:
            out.extend(now())
    out.extend(now())
    return out


@PLAYOUT
@given(rules=table_rules(), seed=st.binary(min_size=32, max_size=32), play=st.integers(0, 2**32))
def test_every_seats_message_is_its_observed_view_and_legal_moves(
    rules: Rules, seed: bytes, play: int
) -> None:
    for msg, view, reference in positions(rules, seed, random.Random(play)):
        message = json.loads(msg.message)
        assert message["view"] == view.to_dict()
        assert message["legal"] == reference_legal(view)
        assert view_of(msg) == view  # what a reader takes back is the view itself
        # ... and the whole message is the reference message, byte for byte
        assert msg.message == orjson.dumps(reference)
        assert (msg.table_id, msg.version, msg.status) == (
            reference["table_id"],
            reference["version"],
            reference["status"],
        )


def test_the_positions_cover_every_phase_and_legal_move() -> None:
    rules = Rules(players=3, bonus=True, repair_token=True, target=50, turn_cap=50)
    views = positions(rules, bytes(range(32)), random.Random(7))
    assert {view.phase for _, view, _ in views} == {"draw", "resolve", "round_over", "match_over"}
    acts = {entry["act"] for msg, _, _ in views for entry in message_of(msg)["legal"]}
    assert acts == {"draw", "place", "throw", "repair"}
    for msg, _, reference in views:
        assert message_of(msg) == reference


def test_a_view_message_matches_its_schema_and_keeps_the_protocols_field_order() -> None:
    rules = Rules(players=2, repair_token=True, target=50, turn_cap=50)
    table = Table(rules, bytes(32), random.Random(3))
    while table.match.phase != "resolve" or not table.match.repair_tokens[table.match.turn]:
        table.play()
    msg, view = next((m, v) for m, v in table.views() if v.seat == table.match.turn)
    message = message_of(msg)
    assert schemas()["view"].error(message) is None
    assert any(entry["act"] == "repair" for entry in message["legal"])
    assert list(message) == list(reference_message(table, view))
    assert list(message["view"]) == list(view.to_dict())


def test_a_spectators_view_has_no_rack_offers_no_move_and_matches_its_schema() -> None:
    rules = Rules(players=3, repair_token=True, target=50, turn_cap=50)
    views = positions(rules, bytes(range(32)), random.Random(11))
    spectators = [message_of(msg) for msg, view, _ in views if view.seat == SPECTATOR]
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
        if message["view"]["phase"] in ("draw", "resolve"):
            assert message["view"]["racks"] is None and message["view"]["seed"] is None


@HIDING
@given(rules=table_rules(), seed=st.binary(min_size=32, max_size=32), play=st.integers(0, 2**32))
def test_the_json_sent_carries_no_hidden_card_no_seed_and_no_stock_order_before_their_time(
    rules: Rules, seed: bytes, play: int
) -> None:
    """What tests/rackcore/test_view_hiding.py holds of ``observe``, held of the text itself:
    with the stock reversed (its order hidden) every seat's and a spectator's text is the same,
    the seed is in no text before the end, and no other seat's rack before the reveal."""
    rnd = random.Random(play)
    table = Table(rules, seed, rnd)
    match, wanted = table.match, [*range(rules.players), SPECTATOR]
    while match.phase != "match_over":
        now = table_views(table.meta, match, table.state, [], wanted, NOW)
        hidden_order = not match.stock_public and len(match.stock) >= 2
        match.stock.reverse()  # (put back below: the same table but for the stock's order)
        later = table_views(table.meta, match, table.state, [], wanted, NOW)
        match.stock.reverse()
        for seat, msg in now.items():
            assert seed.hex().encode() not in msg.message
            if hidden_order:
                assert later[seat].message == msg.message
            if match.phase in ("draw", "resolve"):
                view = message_of(msg)["view"]
                assert view["rack"] == (list(match.racks[seat]) if seat != SPECTATOR else [])
                assert view["racks"] is None
        table.play()
    assert all(
        seed.hex().encode() in m.message
        for m in table_views(table.meta, match, table.state, [], wanted, NOW).values()
    )
