"""Two people in two browsers: one creates a private table, the other joins by its code."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from .axe import assert_accessible
from .conftest import watch
from .player import MY_DECISION, Player, table_code

pytestmark = pytest.mark.browser


def public(tv: dict[str, Any]) -> dict[str, Any]:
    """What every seat sees alike."""
    v = tv["view"]
    keys = ("round_no", "turn", "phase", "discard", "stock_count", "scores", "last_pickup", "known")
    return {"version": tv["version"], **{k: v[k] for k in keys}}


def test_a_friend_joins_by_code_and_both_play(
    new_context: Callable[..., BrowserContext], server_url: str
) -> None:
    host_page: Page = watch(new_context().new_page())
    guest_page: Page = watch(new_context().new_page())
    host, guest = Player(host_page, server_url), Player(guest_page, server_url)

    host.open_home()
    host_page.fill("#name", "Hana")
    host.set_rules({"target": 50, "run_to_go_out": 0}, players=3)
    host_page.click("#btn-create")
    expect(host_page.locator("#screen-lobby")).to_be_visible()
    code = table_code(host_page)
    link = host_page.locator("#lobby-link").input_value()
    assert link == f"{server_url}/?code={code}"
    expect(host_page.locator("#btn-start")).to_be_visible()

    assert_accessible(host_page, "the waiting room")

    # the share link opens an invitation: the table's code, a name, Join
    guest_page.goto(link)
    expect(guest_page.locator("#screen-invite")).to_be_visible()
    expect(guest_page.locator("#screen-home")).to_be_hidden()
    expect(guest_page.locator("#invite-code")).to_have_text(code)
    expect(guest_page.locator("#invite-name")).to_be_focused()
    assert_accessible(guest_page, "the invitation")
    guest_page.keyboard.type("Gil")
    guest_page.keyboard.press("Enter")
    expect(guest_page.locator("#screen-lobby")).to_be_visible()
    expect(guest_page.locator("#btn-start")).to_be_hidden()  # only the host starts
    for page in (host_page, guest_page):
        seats = page.locator("#lobby-seats li")
        expect(seats).to_have_count(3)
        expect(seats.nth(0)).to_contain_text("Hana")
        expect(seats.nth(1)).to_contain_text("Gil")
        expect(seats.nth(2)).to_contain_text("Free seat")

    host_page.click("#btn-start")  # a computer player takes the free seat
    for page in (host_page, guest_page):
        expect(page.locator("#screen-table")).to_be_visible()
        expect(page.locator("#opponents .opp")).to_have_count(2)
    expect(host_page.locator("#opponents")).to_contain_text("Gil")
    expect(guest_page.locator("#opponents")).to_contain_text("Hana")
    expect(host_page.locator("#opponents .badge.bot")).to_have_count(1)

    # a few turns each, whoever's turn it is
    draw = f"{MY_DECISION} && window.rackem.state.tv.view.phase === 'draw'"
    turns = {"host": 0, "guest": 0}
    deadline = time.monotonic() + 90
    while min(turns.values()) < 3:
        acted = False
        for who, player in (("host", host), ("guest", guest)):
            if player.page.evaluate(draw):
                player.play_turn()
                turns[who] += 1
                acted = True
        if not acted:
            host_page.wait_for_timeout(50)
        assert time.monotonic() < deadline, turns

    # once a person's decision holds the table, both see the same table
    host_page.wait_for_function(draw + " || " + WAITING_FOR_GUEST)
    a, b = host.tv(), guest.tv()
    guest_page.wait_for_function(f"window.rackem.state.tv.version === {a['version']}")
    b = guest.tv()
    assert public(a) == public(b)
    host_points = host_page.locator("#scores td.pts").all_inner_texts()
    guest_points = guest_page.locator("#scores td.pts").all_inner_texts()
    assert host_points == guest_points == [str(p) for p in a["view"]["scores"]]
    assert host_page.errors == [] and guest_page.errors == []  # type: ignore[attr-defined]


# the host sees that it is the guest's (seat 1) turn to draw
WAITING_FOR_GUEST = (
    "(window.rackem.state.tv.view.turn === 1 && window.rackem.state.tv.view.phase === 'draw'"
    " && window.rackem.state.tv.status === 'playing')"
)


def test_two_people_in_quick_match_meet_at_one_table(
    new_context: Callable[..., BrowserContext], server_url: str
) -> None:
    pages = [watch(new_context().new_page()) for _ in range(2)]
    for page, name in zip(pages, ("Quin", "Quill"), strict=True):
        page.goto(server_url)
        page.fill("#name", name)
        page.locator('#form-quick input[name="quick_players"][value="2"]').check(force=True)
        page.click("#btn-quick")
    for page in pages:
        expect(page.locator("#screen-table")).to_be_visible()
    first, second = (Player(page, server_url).tv() for page in pages)
    assert first["table_id"] == second["table_id"]
    expect(pages[0].locator("#opponents")).to_contain_text("Quill")
    expect(pages[1].locator("#opponents")).to_contain_text("Quin")
    assert pages[0].errors == [] and pages[1].errors == []  # type: ignore[attr-defined]
