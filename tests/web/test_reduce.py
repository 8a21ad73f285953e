"""The page's reducer (js/reduce.js), run in Chromium.

Every change to the page's state is ``reduce(state, action)``: a server message as it
arrived (``{type: "server", msg, at}``) or an action of the page's own. These run it
from ``initialState`` through a list of actions and read each state it returns; the
messages are the shapes the server sends (docs/protocol.md), cut down to what the
reducer reads.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import Page

pytestmark = pytest.mark.browser


def run(page: Page, actions: list[dict[str, Any]], start: dict[str, Any] | None = None) -> Any:
    """Each state from ``initialState`` (with ``start``'s fields) through ``actions``;
    ``same[i]``: action i returned the state it was given, ``untouched``: no state given
    to the reducer was changed by it."""
    return page.evaluate(
        """async ([actions, start]) => {
            const { initialState, reduce } = await import('/js/reduce.js');
            let state = { ...initialState, ...start };
            const states = [], same = [];
            let untouched = true;
            for (const action of actions) {
                const before = JSON.stringify(state);
                const next = reduce(state, action);
                untouched = untouched && JSON.stringify(state) === before;
                same.push(next === state);
                states.push(next);
                state = next;
            }
            return { states, same, untouched };
        }""",
        [actions, start or {}],
    )


def server(msg: dict[str, Any], at: float = 1000.0) -> dict[str, Any]:
    return {"type": "server", "msg": msg, "at": at}


def view(version: int, table_id: str = "t1", **fields: Any) -> dict[str, Any]:
    """A `view` of ``table_id`` for seat 0 of two, playing, seat 0 to draw."""
    inner = {
        "seat": 0,
        "turn": 0,
        "phase": "draw",
        "round_no": 1,
        "rules": {"players": 2, "partners": False},
        "rack": [5, 9, 14, 20, 22, 31, 33, 40, 41, 50],
        "discard": [17],
        "scores": [0, 0],
        "rounds": [],
        "winner": None,
        "held": None,
        "held_from": None,
    }
    top: dict[str, Any] = {
        "type": "view",
        "table_id": table_id,
        "version": version,
        "status": "playing",
        "seats": [
            {"seat": 0, "name": "Ann", "kind": "human"},
            {"seat": 1, "name": "Bob", "kind": "bot"},
        ],
        "remaining_ms": 0,
        "legal": [{"act": "draw", "from": "stock"}],
    }
    for key, value in fields.items():
        (top if key in ("status", "last_move", "legal", "seats") else inner)[key] = value
    return {**top, "view": inner}


LOBBY = {
    "type": "lobby",
    "code": "K7MX2Q",
    "table_id": "t2",
    "rules": {"players": 2},
    "seats": [],
    "creator_seat": 0,
    "you": 0,
    "status": "waiting",
    "fill_deadline_ms": 0,
    "public": False,
    "level": "medium",
    "spectators": "off",
}


def test_a_view_shows_the_table_and_answers_the_move_on_its_way(js: Page) -> None:
    out = run(
        js,
        [
            server(LOBBY),
            server(view(3), at=50.0),
            {"type": "move_sent", "id": "m1", "version": 3},
            server(view(3, turn=1)),  # the same version again: the move is still on its way
            server(
                view(
                    4,
                    last_move={"seat": 0, "act": "draw", "from": "stock"},
                    held=12,
                    phase="resolve",
                )
            ),
        ],
    )
    lobby, first, sent, again, answered = out["states"]
    assert lobby["screen"] == "lobby" and lobby["lobby"]["code"] == "K7MX2Q"
    assert first["screen"] == "table" and first["lobby"] is None
    assert first["tv"]["version"] == 3 and first["receivedAt"] == 50.0
    assert sent["pending"] == {"id": "m1", "version": 3}
    assert again["pending"] == {"id": "m1", "version": 3}
    assert answered["pending"] is None
    assert answered["log"] == ["You drew 12 from the stock"]
    assert out["untouched"] is True


def test_a_late_older_view_leaves_the_state_as_it_was(js: Page) -> None:
    out = run(js, [server(view(5)), server(view(4, turn=1))])
    assert out["same"] == [False, True]
    assert out["states"][1]["tv"]["version"] == 5


def test_a_new_table_forgets_the_last_ones_moves_hint_and_check(js: Page) -> None:
    out = run(
        js,
        [
            server(view(1)),
            server(view(2, turn=1, last_move={"seat": 0, "act": "throw"}, discard=[17, 30])),
            {"type": "hint", "text": "Draw a card first."},
            {"type": "verify", "verified": {"table_id": "t1", "state": "ok", "text": "✓ Verified"}},
            server(view(1, table_id="t9")),
        ],
    )
    before, after = out["states"][3], out["states"][4]
    assert before["log"] and before["hint"] and before["verified"]
    assert after["tv"]["table_id"] == "t9"
    assert (after["log"], after["hint"], after["verified"]) == ([], None, None)


def test_messages_that_change_nothing_return_the_same_state(js: Page) -> None:
    out = run(
        js,
        [
            server(view(1)),
            server({"type": "moved", "id": "m1", "version": 2}),
            server({"type": "pong", "t": 5}),
            server({"type": "left"}),
        ],
    )
    assert out["same"] == [False, True, True, True]


def test_seated_at_another_table_waits_for_it_and_at_the_same_one_keeps_the_view(js: Page) -> None:
    seated = {"type": "seated", "token": "x", "seat": 0, "code": "K7MX2Q"}
    out = run(
        js,
        [
            server(view(1)),
            server({**seated, "table_id": "t1"}),
            server({**seated, "table_id": "t2"}),
        ],
    )
    resumed, moved_on = out["states"][1], out["states"][2]
    assert resumed["tv"]["version"] == 1 and resumed["screen"] == "table"
    assert moved_on["tv"] is None and moved_on["screen"] == "loading"
    assert moved_on["loadingText"] == "Taking a seat…"
    in_lobby = run(js, [server(LOBBY), server({**seated, "table_id": "t2"})])["states"][1]
    assert in_lobby["screen"] == "lobby"


def test_a_lobby_closed_by_its_host_goes_home(js: Page) -> None:
    out = run(js, [server(LOBBY), server({**LOBBY, "status": "closed"})])
    assert out["states"][1]["screen"] == "home" and out["states"][1]["lobby"] is None
    started = run(js, [server({**LOBBY, "status": "started"})])["states"][0]
    assert started["screen"] == "loading" and started["loadingText"] == "Dealing the cards…"


def test_errors_answer_the_move_and_leave_the_loading_screen(js: Page) -> None:
    error = {"type": "error", "code": "illegal_move", "message": "no"}
    out = run(
        js,
        [
            server(view(3)),
            {"type": "move_sent", "id": "m1", "version": 3},
            server({**error, "id": "m0"}),  # another move's answer
            server({**error, "id": "m1"}),
            {"type": "show", "screen": "loading", "loading": "Asking for a rematch…"},
            server({**error, "code": "no_rematch"}),
        ],
    )
    states = out["states"]
    assert states[2]["pending"] == {"id": "m1", "version": 3}
    assert states[3]["pending"] is None
    assert states[4]["screen"] == "loading" and states[4]["loadingText"] == "Asking for a rematch…"
    assert states[5]["screen"] == "table"  # a player with a view goes back to it
    nowhere = run(js, [server({**error, "code": "no_code"})])["states"][0]
    assert nowhere["screen"] == "home"
    gone = run(js, [server(view(3)), server({**error, "code": "bad_token"})])["states"][1]
    assert gone["screen"] == "home" and gone["tv"] is None


def test_watching_then_refused_stops_watching(js: Page) -> None:
    out = run(
        js,
        [
            server({"type": "watching", "table_id": "t1", "code": "K7MX2Q"}),
            server({"type": "error", "code": "no_spectators", "message": "no"}),
        ],
    )
    watching, refused = out["states"]
    assert watching["watching"] == "K7MX2Q" and watching["loadingText"] == "Watching table K7MX2Q…"
    assert refused["watching"] is None and refused["screen"] == "home"


def test_repair_arms_only_when_legal_and_a_move_disarms_it(js: Page) -> None:
    repairable = view(
        3, phase="resolve", held=12, legal=[{"act": "repair", "slot": 2}, {"act": "throw"}]
    )
    out = run(
        js,
        [
            server(view(2)),
            {"type": "repair_toggled"},
            server(repairable),
            {"type": "repair_toggled"},
            {"type": "hint", "text": "Place it."},
            {"type": "move_sent", "id": "m1", "version": 3},
            {"type": "history_toggled"},
            {"type": "modes_cancelled"},
        ],
    )
    states = out["states"]
    assert states[1]["repairMode"] is False  # no repair is legal in the draw phase
    assert states[3]["repairMode"] is True
    assert states[5]["repairMode"] is False and states[5]["hint"] is None
    assert states[6]["historyOpen"] is True
    assert states[7]["historyOpen"] is False


def test_the_connections_status_and_greeting(js: Page) -> None:
    waiting = {"state": "waiting", "attempt": 1, "retryAt": 0}
    out = run(
        js,
        [
            {"type": "connection", "status": waiting, "start": "home"},
            {"type": "connection", "status": {"state": "open"}, "start": "home"},
        ],
    )
    offline, online = out["states"]
    assert offline["screen"] == "home" and offline["connection"]["state"] == "waiting"
    assert online["connection"] == {"state": "open"}
    greeted = run(js, [{"type": "greeted", "loading": "Taking your seat again…", "start": None}])
    assert greeted["states"][0]["screen"] == "loading"
    assert greeted["states"][0]["loadingText"] == "Taking your seat again…"
    started = run(js, [{"type": "greeted", "loading": None, "start": "invite"}])["states"][0]
    assert started["screen"] == "invite"


def test_leaving_a_table_forgets_it_and_its_offer(js: Page) -> None:
    offer: dict[str, Any] = {
        "type": "rematch_offer",
        "table_id": "t2",
        "code": "A",
        "status": "waiting",
    }
    offer |= {"seats": [], "deadline_ms": 0}
    out = run(js, [server(view(1)), server(offer), {"type": "table_left"}])
    assert out["states"][1]["offer"]["table_id"] == "t2"
    left = out["states"][2]
    assert [left[key] for key in ("tv", "offer", "lobby", "watching")] == [None] * 4
    assert left["log"] == []
    assert json.dumps(left["connection"]) == json.dumps({"state": "connecting", "attempt": 0})
