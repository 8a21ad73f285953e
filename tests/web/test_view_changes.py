"""What changed between two views (js/changes.js), run in Chromium.

The page's reactions to a new view (the recent-moves line, sounds, announcements)
follow from ``viewChanges(prev, tv, name)`` alone; these views are the shapes the
server sends (docs/protocol.md, "Views"), cut down to what the function reads.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from playwright.sync_api import Page

pytestmark = pytest.mark.browser

NAMES = {0: "You", 1: "Bob", 2: "Cy", 3: "Di"}


def changes(page: Page, prev: Any, tv: Any) -> Any:
    """``viewChanges(prev, tv, name)`` in the page, and both views afterwards."""
    return page.evaluate(
        """async ([prev, tv, names]) => {
            const { viewChanges } = await import('/js/changes.js');
            const out = viewChanges(prev, tv, (s) => names[s]);
            return { out, prev, tv };
        }""",
        [prev, tv, NAMES],
    )


def view(version: int, **fields: Any) -> dict[str, Any]:
    """A view of table t1 for seat 0 of two, playing, seat 0 to draw."""
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
    top = {"table_id": "t1", "version": version, "status": "playing", "seats": []}
    for key, value in fields.items():
        (top if key in ("table_id", "status", "last_move") else inner)[key] = value
    return {**top, "view": inner}


def test_a_late_older_view_is_stale_and_changes_nothing(js: Page) -> None:
    answer = changes(js, view(5), view(4, turn=1))
    assert answer["out"]["stale"] is True
    assert answer["out"]["move"] is None
    assert answer["out"]["turnStarted"] is False


def test_the_first_view_of_a_table_is_new_and_may_start_my_turn(js: Page) -> None:
    out = changes(js, None, view(1))["out"]
    assert out["newTable"] is True and out["stale"] is False
    assert out["myTurn"] is True and out["turnStarted"] is True
    assert out["move"] is None and out["moveSound"] is None
    other = changes(js, view(9, table_id="t0"), view(1))["out"]
    assert other["newTable"] is True and other["stale"] is False


def test_an_opponents_draw_is_announced_and_mine_is_not(js: Page) -> None:
    theirs = changes(
        js,
        view(3, turn=1),
        view(4, turn=1, phase="resolve", last_move={"seat": 1, "act": "draw", "from": "stock"}),
    )["out"]
    assert theirs["move"] == "Bob drew from the stock"
    assert theirs["moveByOther"] is True and theirs["moveSound"] == "draw"
    assert theirs["myTurn"] is False and theirs["holding"] is False
    mine = changes(
        js,
        view(4),
        view(
            5,
            phase="resolve",
            held=44,
            held_from="stock",
            last_move={"seat": 0, "act": "draw", "from": "stock"},
        ),
    )["out"]
    assert mine["move"] == "You drew 44 from the stock"
    assert mine["moveByOther"] is False and mine["moveSound"] == "draw"
    assert mine["holding"] is True and mine["turnStarted"] is False


def test_my_turn_starts_once_after_the_opponents_move(js: Page) -> None:
    place = {"seat": 1, "act": "place", "slot": 3}
    started = changes(
        js,
        view(6, turn=1, phase="resolve", held_from="stock"),
        view(7, discard=[17, 8], last_move=place),
    )
    assert started["out"]["turnStarted"] is True and started["out"]["moveSound"] == "place"
    again = changes(js, view(7), view(8))["out"]
    assert again["turnStarted"] is False and again["myTurn"] is True


def test_a_round_ends_naming_who_went_out_then_the_next_is_dealt(js: Page) -> None:
    won_round = {"winner": 1, "points": [25, 75]}
    ended = changes(
        js,
        view(10, turn=1),
        view(11, turn=1, phase="round_over", status="round_over", rounds=[won_round]),
    )
    assert ended["out"]["roundEnded"] == "Bob went out."
    assert ended["out"]["roundDealt"] is False and ended["out"]["matchEnded"] is False
    nobody = changes(
        js, view(10), view(11, phase="round_over", status="round_over", rounds=[{"winner": None}])
    )
    assert nobody["out"]["roundEnded"] == "Round over, nobody went out."
    dealt = changes(js, view(11, phase="round_over", status="round_over"), view(12, round_no=2))[
        "out"
    ]
    assert dealt["roundDealt"] is True and dealt["roundEnded"] is None


def test_the_match_ends_once_won_by_my_seat_or_my_team(js: Page) -> None:
    over = {"phase": "match_over", "status": "finished"}
    lost = changes(js, view(20), view(21, winner=1, **over))["out"]
    assert lost["matchEnded"] is True and lost["won"] is False
    won = changes(js, view(20), view(21, winner=0, **over))["out"]
    assert won["matchEnded"] is True and won["won"] is True
    partners = {"rules": {"players": 4, "partners": True}, "seat": 2}
    team = changes(js, view(20, **partners), view(21, winner=0, **partners, **over))["out"]
    assert team["won"] is True
    after = changes(js, view(21, winner=0, **over), view(22, winner=0, **over))["out"]
    assert after["matchEnded"] is False and after["won"] is False


def test_it_changes_neither_view(js: Page) -> None:
    prev = view(4)
    tv = view(
        5,
        phase="resolve",
        held=44,
        held_from="stock",
        last_move={"seat": 0, "act": "draw", "from": "stock"},
    )
    before = copy.deepcopy([prev, tv])
    answer = changes(js, prev, tv)
    assert json.dumps([answer["prev"], answer["tv"]], sort_keys=True) == json.dumps(
        before, sort_keys=True
    )
