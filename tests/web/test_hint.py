"""The Hint at the table: only where every other seat is a computer, a legal move shown.

The page's side of the `hint` message (docs/protocol.md): the reducer keeps the Hint asked
for on this decision and the move that answers it, until a move is made (run in Chromium
from ``js/reduce.js``); at a real table against the computer the Hint button outlines the
suggested pile, slot or Throw and says the move in words; at a table with another person
there is no Hint button at all, and ``A`` asks nothing.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from .axe import assert_accessible
from .conftest import PHONE, watch
from .player import FAST_RULES, Player, table_code
from .test_reduce import run, server, view

pytestmark = pytest.mark.browser

MARK = {"stock": "#stock", "discard": "#discard", "throw": "#btn-throw"}


def test_the_reducer_keeps_a_hint_for_its_decision_only(js: Page) -> None:
    asked = {"type": "hint_asked", "id": "h1", "version": 3}
    move = {"act": "draw", "from": "stock"}
    out = run(
        js,
        [
            server(view(3)),
            asked,
            server({"type": "hint", "id": "other", "version": 3, "move": move}),  # not ours
            server({"type": "hint", "id": "h1", "version": 3, "move": move}),
            server(view(3)),  # the same version again (a clock, a connection): kept
            server(view(4)),  # a move was made: gone
            {**asked, "version": 4},
            server({"type": "error", "code": "hint_unavailable", "message": "x", "id": "h1"}),
            {**asked, "version": 4},
            {"type": "move_sent", "id": "m1", "version": 4},
            server({"type": "hint", "id": "h1", "version": 4, "move": move}),  # too late
            {**asked, "version": 4},
            server(view(0, table_id="t2")),  # a new table forgets it
        ],
    )
    coach = [state["coach"] for state in out["states"]]
    assert coach[1] == {"id": "h1", "version": 3, "move": None}
    assert out["same"][2] and coach[2] == coach[1]
    assert coach[3] == {"id": "h1", "version": 3, "move": move}
    assert coach[4] == coach[3]
    assert coach[5] is None
    assert coach[6] is not None and coach[7] is None  # refused: the page asks no more
    assert coach[9] is None and out["same"][10]
    assert coach[11] is not None and coach[12] is None
    assert out["untouched"]


def hint_names_a_legal_move(page: Page, me: Player) -> dict[str, Any]:
    """Press the Hint, then check it names and outlines one of the view's legal moves."""
    tv = me.tv()
    page.locator("#btn-coach").click()
    expect(page.locator("#coach")).to_have_text(re.compile(r"^Hint: .+\.$"))
    move: dict[str, Any] = page.evaluate("window.rackem.state.coach.move")
    bare = {k: v for k, v in move.items() if k != "go_out"}
    assert bare in tv["legal"], (move, tv["legal"])
    text = page.locator("#coach").inner_text()
    if move["act"] == "draw":
        target = MARK[move["from"]]
        words = (
            "draw from the stock" if move["from"] == "stock" else "take the top of the discard pile"
        )
        assert words in text
    elif move["act"] == "place":
        target = f'#my-rack .slot[data-slot="{move["slot"]}"]'
        assert f"place the {tv['view']['held']} in slot {(move['slot'] + 1) * 5}" in text
    else:
        target = MARK[move["act"]]
        assert f"throw the {tv['view']['held']} away" in text
    expect(page.locator(target)).to_have_class(re.compile(r"\bcoach-pick\b"))
    expect(page.locator(".coach-pick")).to_have_count(1)
    expect(page.locator("#btn-coach")).to_be_disabled()  # once a decision
    return move


def test_the_hint_at_a_table_against_the_computer_names_a_legal_move(
    page: Page, server_url: str
) -> None:
    me = Player(page, server_url)
    me.new_game("Ann", FAST_RULES)
    me.wait_my_decision("draw")
    hint = page.locator("#btn-coach")
    expect(hint).to_be_visible()
    expect(hint).to_be_enabled()
    box = hint.bounding_box()
    assert box is not None and box["width"] >= 44 and box["height"] >= 44

    move = hint_names_a_legal_move(page, me)
    assert move["act"] == "draw"
    assert_accessible(page, "the table with a hint")
    # it clears with the next move (here: the one it suggested)
    version = me.tv()["version"]
    page.locator(MARK[move["from"]]).click()
    me.wait_version_after(version)
    expect(page.locator("#coach")).to_have_text("")
    expect(page.locator(".coach-pick")).to_have_count(0)

    # holding the card: the A key asks, and the hint is a place or a throw
    me.wait_my_decision("resolve")
    expect(hint).to_be_enabled()
    page.locator("body").focus()
    page.keyboard.press("a")
    expect(page.locator("#coach")).to_have_text(re.compile(r"^Hint: (place|throw) the \d+"))
    tv = me.tv()
    move = page.evaluate("window.rackem.state.coach.move")
    assert {k: v for k, v in move.items() if k != "go_out"} in tv["legal"]
    action, slot = me.choose(tv)
    me._act(action, slot, "click")
    me.wait_version_after(tv["version"])
    expect(page.locator("#coach")).to_have_text("")
    # the help names the key
    page.keyboard.press("?")
    expect(page.locator("#help")).to_contain_text("Hint: the computer suggests a move")
    page.keyboard.press("Escape")
    assert page.errors == []  # type: ignore[attr-defined]


def test_the_hint_on_a_phone_is_a_big_enough_tap_target(
    new_context: Callable[..., BrowserContext], server_url: str
) -> None:
    page = watch(new_context(**PHONE).new_page())
    me = Player(page, server_url)
    me.new_game("Pat", FAST_RULES)
    me.wait_my_decision("draw")
    hint = page.locator("#btn-coach")
    box = hint.bounding_box()
    assert box is not None and box["width"] >= 44 and box["height"] >= 44
    hint.tap()
    expect(page.locator("#coach")).to_have_text(re.compile(r"^Hint: .+\.$"))
    expect(page.locator(".coach-pick")).to_have_count(1)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["viewport"]["width"]
    assert_accessible(page, "the table with a hint, on a phone")
    assert page.errors == []  # type: ignore[attr-defined]


def first_to_move(players: list[Player]) -> Player:
    """The player whose decision the table waits for first."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for player in players:
            if player.page.evaluate("Boolean(window.rackem?.state?.tv?.legal?.length)"):
                return player
        time.sleep(0.1)
    raise AssertionError("nobody got a decision")


def test_no_hint_at_a_table_with_another_person(
    new_context: Callable[..., BrowserContext], server_url: str
) -> None:
    host_page = watch(new_context().new_page())
    guest_page = watch(new_context().new_page())
    host, guest = Player(host_page, server_url), Player(guest_page, server_url)
    host.open_home()
    host_page.fill("#name", "Hana")
    host.set_rules(FAST_RULES, players=2)
    host_page.click("#btn-create")
    expect(host_page.locator("#screen-lobby")).to_be_visible()
    code = table_code(host_page)
    guest_page.goto(f"{server_url}/?code={code}")
    guest_page.fill("#invite-name", "Gil")
    guest_page.click("#btn-invite-join")  # the last seat: the table starts
    for page in (host_page, guest_page):
        expect(page.locator("#screen-table")).to_be_visible()
        expect(page.locator("#my-rack .slot")).to_have_count(10)
    mover = first_to_move([host, guest])
    for page in (host_page, guest_page):
        # not hidden: not on the page at all
        expect(page.locator("#btn-coach")).to_have_count(0)
    mover.page.locator("body").focus()
    mover.page.keyboard.press("a")
    mover.page.wait_for_timeout(300)
    assert mover.page.evaluate("window.rackem.state.coach") is None
    expect(mover.page.locator("#coach")).to_have_text("")
    for page in (host_page, guest_page):
        assert page.errors == []  # type: ignore[attr-defined]
