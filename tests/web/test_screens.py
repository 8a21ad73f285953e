"""What a player sees at every window size, on a phone, when covered, and with a screen reader.

Each test starts one game and looks at it many ways (window sizes are changed on the
same page), so the whole file costs a few games' time.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, FloatRect, Page, expect

from .axe import assert_accessible
from .conftest import DESKTOP, PHONE, watch
from .layout import overflows
from .player import STATE, Player

pytestmark = pytest.mark.browser

SIZES = [(1024, 768), (768, 1024), (1280, 800), (1366, 768), (390, 844), (360, 640)]


def box(page: Page, selector: str) -> FloatRect:
    found = page.locator(selector).bounding_box()
    assert found is not None, selector
    return found


def overlap(a: FloatRect, b: FloatRect) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


def hold_a_card(page: Page, server_url: str, players: int) -> Player:
    """A new game against the computer, this seat holding the card it drew from the stock."""
    me = Player(page, server_url)
    me.new_game("Ann", {"target": 500}, players)
    me.wait_my_decision("draw")
    page.locator("#stock").click()
    me.wait_my_decision("resolve")
    return me


@pytest.mark.parametrize("players", [2, 4])
def test_the_table_fits_every_window_while_holding_a_card(
    new_context: Callable[..., BrowserContext], server_url: str, players: int
) -> None:
    page = watch(new_context().new_page())
    hold_a_card(page, server_url, players)
    expect(page.locator("#hint")).to_be_visible()  # a first game: its hints are part of it
    problems = []
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_function(f"innerWidth === {width} && innerHeight === {height}")
        problems += [f"{width}x{height}: {line}" for line in overflows(page, "body")]
        for part in ("#held .card", "#held-label", "#btn-throw", "#turn-banner", "#my-score"):
            expect(page.locator(part)).to_be_in_viewport(ratio=1)
        expect(page.locator("#opponents .opp")).to_have_count(players - 1)
    assert not problems, "\n".join(problems)
    page.set_viewport_size(DESKTOP)
    assert_accessible(page, f"the table, {players} players, holding a card")
    assert page.errors == []  # type: ignore[attr-defined]


def test_a_phone_shows_hints_history_and_score_without_covering_the_table(
    new_context: Callable[..., BrowserContext], server_url: str
) -> None:
    page = watch(new_context(**PHONE).new_page())
    me = Player(page, server_url)
    me.open_home()
    # the home's felt covers the whole page, however far it scrolls (no seam)
    assert page.evaluate(
        "document.body.getBoundingClientRect().height >= document.documentElement.scrollHeight"
    )
    # the rules' options fit the phone: each choice readable in full
    page.locator("#rules-options summary").tap()
    run = page.locator('#form-new [name="run_to_go_out"]')
    assert run.evaluate("e => e.scrollWidth <= e.clientWidth")
    assert box(page, '#form-new [name="run_to_go_out"]')["width"] >= 250
    # any target the rules allow is one the form takes, as its summary says
    page.locator('#form-new [name="target"]').fill("55")
    page.locator('#form-new [name="target"]').dispatch_event("change")
    expect(page.locator("#rules-summary")).to_contain_text("to 55")
    assert page.locator("#form-new").evaluate("f => f.checkValidity()")
    page.locator('#form-new [name="target"]').fill("500")

    hold = hold_a_card(page, server_url, 2)
    assert hold.tv()["view"]["phase"] == "resolve"
    hint, banner = box(page, "#hint"), box(page, "#turn-banner")
    expect(page.locator("#hint")).to_be_visible()
    for covered in ("#opponents", "#turn-banner", "#my-rack", ".band"):
        assert not overlap(hint, box(page, covered)), f"the hint covers {covered}"
    assert banner["y"] >= box(page, "#opponents")["y"] + box(page, "#opponents")["height"]
    expect(page.locator("#my-score")).to_have_text("You: 0")
    # tap targets of at least 44 by 44 px
    for target in ("#btn-help", "#btn-sound", "#hint-close", "#btn-history"):
        found = box(page, target)
        assert found["width"] >= 44 and found["height"] >= 44, (target, found)

    page.locator("#btn-history").tap()
    expect(page.locator("#history")).to_be_visible()
    history = box(page, "#history")
    for covered in ('#my-rack .slot[data-slot="9"]', ".band", "#turn-banner"):
        assert not overlap(history, box(page, covered)), f"the history covers {covered}"
    page.locator("#btn-history").tap()
    page.locator("#hint-close").tap()
    assert overflows(page, "body") == []
    assert page.errors == []  # type: ignore[attr-defined]


def test_a_covered_player_is_told_and_takes_the_seat_back_with_one_key(
    page: Page, server_url: str
) -> None:
    me = Player(page, server_url)
    me.new_game("Cleo", {"target": 500})
    me.wait_my_decision("draw")
    seen_before = page.evaluate("JSON.parse(localStorage.getItem('rackem.prefs')).hintsSeen")
    # Cleo does nothing: the clock (8 s in these tests) runs out, the computer plays for her.
    banner = page.locator("#turn-banner")
    expect(banner).to_have_class(re.compile(r"\bcovered\b"), timeout=30_000)
    expect(page.locator("#turn-text")).to_have_text(
        "Your clock ran out: the computer is playing for you."
    )
    expect(page.locator("#btn-back")).to_be_visible()
    expect(page.locator("#btn-back")).to_contain_text("Take my seat back")
    expect(page.locator("#my-clock")).to_be_hidden()
    # the computer's moves for her bring no first-game hints about them
    me_seat = f"{STATE}.tv.seats.find(s => s.seat === {STATE}.tv.view.seat)"
    page.wait_for_function(f"{STATE}.tv.last_move && {STATE}.tv.last_move.by === 'cover'")
    expect(page.locator("#hint")).to_be_hidden()
    seen = page.evaluate("JSON.parse(localStorage.getItem('rackem.prefs')).hintsSeen")
    assert set(seen) == set(seen_before)
    assert_accessible(page, "the table, covered")

    page.keyboard.press("Enter")
    page.wait_for_function(f"{me_seat}.kind === 'human'")
    expect(banner).not_to_have_class(re.compile(r"\bcovered\b"))
    expect(page.locator("#btn-back")).to_be_hidden()
    # and she plays on herself: her next decision is hers (a draw, or the card the
    # computer drew for her), and the table records it as hers
    tv = me.wait_my_decision()
    action, slot = me.choose(tv)
    me._act(action, slot, "click")
    page.wait_for_function(
        f"{STATE}.tv.last_move && {STATE}.tv.last_move.seat === {STATE}.tv.view.seat"
        f" && {STATE}.tv.last_move.by === 'human'"
    )
    assert page.errors == []  # type: ignore[attr-defined]


def test_home_and_how_to_play_pass_axe_and_give_focus_back(page: Page, server_url: str) -> None:
    me = Player(page, server_url)
    me.open_home()
    expect(page.locator("#offline-note")).to_be_hidden()
    assert_accessible(page, "home")
    page.keyboard.press("?")
    expect(page.locator("#help")).to_be_visible()
    assert_accessible(page, "How to play")
    page.keyboard.press("Escape")
    expect(page.locator("#help")).to_be_hidden()
    assert page.evaluate("document.activeElement !== document.body")
    # opened from its button, focus goes back to the button
    page.locator("#btn-help").click()
    page.locator("#help .help-close-row button").click()
    expect(page.locator("#btn-help")).to_be_focused()
    assert page.errors == []  # type: ignore[attr-defined]


def test_an_empty_stock_is_named_as_it_shows(page: Page, server_url: str) -> None:
    """A stock run dry (as at the end of a round with no refill left) shows "empty", and
    its name says so: axe's label-content-name-mismatch once failed on a visible "0"."""
    me = Player(page, server_url)
    me.new_game("Ann", {"target": 500}, 2)
    me.wait_my_decision("draw")
    shown = page.evaluate(
        """async () => {
            const { TableScreen } = await import('/js/table.js');
            const { legalSets } = await import('/js/selectors.js');
            const render = (count) => {
                const tv = structuredClone(window.rackem.state.tv);
                tv.view.stock_count = count;
                const ui = { covered: false, pending: false, repairMode: false, historyOpen: false,
                             log: [], clockSeat: -1, coach: null };
                TableScreen.prototype.renderPiles.call(null, tv, 86, legalSets(tv, false), ui);
                const stock = document.getElementById('stock');
                return [stock.textContent, stock.getAttribute('aria-label')];
            };
            return [render(1), render(0)];
        }"""
    )
    assert shown[0] == ["1", "Stock, 1 card. Draw from the stock (S)"]
    assert shown[1] == ["empty", "Stock, empty. Draw from the stock (S)"]
    assert_accessible(page, "an empty stock")
