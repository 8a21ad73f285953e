"""Playing with the keyboard only: S, D, 1-0, T, R+digit, Enter, ?, M."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from .player import Player

pytestmark = pytest.mark.browser

PREFS = {
    "name": "Kim",
    "players": 2,
    "level": "easy",
    "rules": {"repair_token": True, "run_to_go_out": 0, "target": 50},
}


def test_turns_played_with_the_keyboard_only(page: Page, server_url: str) -> None:
    me = Player(page, server_url)
    # remembered preferences fill the home screen (name, options)
    page.goto(server_url)
    page.evaluate(f"localStorage.setItem('rackem.prefs', {json.dumps(json.dumps(PREFS))})")
    page.reload()
    expect(page.locator("#name")).to_have_value("Kim")
    page.locator("#name").focus()
    page.keyboard.press("Enter")  # on to the New game button
    expect(page.locator("#btn-new-game")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#screen-table")).to_be_visible()
    assert me.tv()["view"]["rules"]["repair_token"] is True

    # out of order: nothing is sent, the page says why
    tv = me.wait_my_decision("draw")
    page.keyboard.press("t")
    expect(page.locator("#toast")).to_have_text("Draw a card first.")
    page.keyboard.press("4")
    expect(page.locator("#hint")).to_contain_text("Cards never move between slots")
    assert me.tv()["version"] == tv["version"]

    # a turn: S draws from the stock, a digit places the card in that slot
    rack = me.rack()
    page.keyboard.press("s")
    tv = me.wait_my_decision("resolve")
    held = tv["view"]["held"]
    assert tv["view"]["held_from"] == "stock"
    expect(page.locator("#held")).to_contain_text(str(held))
    page.keyboard.press("0")  # slot 50, index 9
    me.wait_version_after(tv["version"])
    assert me.rack() == [*rack[:9], held]
    expect(page.locator("#movelog")).to_contain_text(
        f"You put {held} in slot 50 and discarded {rack[9]}"
    )

    # a turn with a repair: R then 1 swaps slots 5 and 10, then the card must still go
    tv = me.wait_my_decision("draw")
    rack = me.rack()
    top = tv["view"]["discard"][-1]
    page.keyboard.press("d")
    tv = me.wait_my_decision("resolve")
    assert tv["view"]["held"] == top and tv["view"]["held_from"] == "discard"
    page.keyboard.press("t")  # a card from the discard pile cannot be thrown
    expect(page.locator("#hint")).to_contain_text("must be placed")
    page.keyboard.press("r")
    expect(page.locator("#repair-col")).to_be_visible()
    page.keyboard.press("1")
    me.wait_version_after(tv["version"])
    swapped = [rack[1], rack[0], *rack[2:]]
    assert me.rack() == swapped
    tv = me.wait_my_decision("resolve")
    page.keyboard.press("r")  # the token is spent for this round
    expect(page.locator("#toast")).to_contain_text("No repair now")
    page.keyboard.press("5")  # slot 25, index 4
    me.wait_version_after(tv["version"])
    assert me.rack() == [*swapped[:4], top, *swapped[5:]]

    # a third turn: draw from the stock and throw the card away
    tv = me.wait_my_decision("draw")
    rack = me.rack()
    page.keyboard.press("s")
    tv = me.wait_my_decision("resolve")
    held = tv["view"]["held"]
    page.keyboard.press("t")
    me.wait_version_after(tv["version"])
    assert me.rack() == rack
    assert me.tv()["view"]["discarded"][tv["view"]["seat"]][-1] == held

    # help and sound from the keyboard
    page.keyboard.press("?")
    expect(page.locator("#help")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#help")).to_be_hidden()
    page.keyboard.press("m")
    expect(page.locator("#btn-sound")).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("m")
    expect(page.locator("#btn-sound")).to_have_attribute("aria-pressed", "false")
    assert page.errors == []  # type: ignore[attr-defined]
