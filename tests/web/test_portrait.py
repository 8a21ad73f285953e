"""The portrait layout on a phone-sized touch screen, played by taps."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, FloatRect, Page, expect

from .conftest import PHONE, PHONE_SIZE, watch
from .player import FAST_RULES, Player

pytestmark = pytest.mark.browser


def box(page: Page, selector: str) -> FloatRect:
    found = page.locator(selector).bounding_box()
    assert found is not None, selector
    return found


def test_a_phone_gets_the_portrait_layout_and_plays_by_taps(
    new_context: Callable[..., BrowserContext], server_url: str
) -> None:
    page = watch(new_context(**PHONE).new_page())
    assert page.evaluate("matchMedia('(pointer: coarse)').matches")
    me = Player(page, server_url)
    me.open_home()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE_SIZE["width"]
    me.new_game("Pat", FAST_RULES)
    me.wait_my_decision("draw")

    width, height = PHONE_SIZE["width"], PHONE_SIZE["height"]
    rack = box(page, "#my-rack")
    band = box(page, ".band")
    opponents = box(page, "#opponents")
    # the rack fills the height between the other players (top) and the piles (bottom band)
    assert rack["height"] > 0.5 * height
    assert opponents["y"] + opponents["height"] <= rack["y"]
    assert band["y"] >= rack["y"] + rack["height"]
    assert band["y"] + band["height"] <= height + 1
    # nothing sideways: the page fits the phone's width
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    # the keyboard panel is for desktops; big enough tap targets on the piles and slots
    expect(page.locator("#keys")).to_be_hidden()
    assert box(page, "#stock")["height"] >= 44
    assert box(page, '#my-rack .slot[data-slot="0"]')["height"] >= 30
    # the opponents' panels are compact, in one row
    expect(page.locator("#opponents .mini-rack").first).to_be_hidden()

    for _ in range(2):
        before = me.rack()
        turn = me.play_turn(by="tap")
        after = me.rack()
        changed = [i for i in range(10) if before[i] != after[i]]
        assert len(changed) <= 1
        if changed:
            assert after[changed[0]] == turn["view"]["held"]
    assert page.errors == []  # type: ignore[attr-defined]
