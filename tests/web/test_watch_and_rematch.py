"""Watching a friend's table by its watch link, and Play again with the same people."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from .conftest import watch
from .player import CAN_CONTINUE, FAST_RULES, MATCH_OVER, MY_DECISION, Player, table_code

pytestmark = pytest.mark.browser

SPECTATOR_SHOWS = """() => {
  const tv = window.rackem.state.tv;
  const v = tv.view;
  const nums = document.querySelectorAll('#opponents .mini-rack .num');
  const shown = [...nums].map((n) => Number(n.textContent));
  const known = v.known.flat().filter(Boolean).concat(v.center || [], (v.racks || []).flat());
  return {seat: v.seat, rack: v.rack, legal: tv.legal, shown, known, status: tv.status};
}"""


def _step(player: Player) -> bool:
    """One thing this page's player can do now (a decision, or Continue); False if none."""
    page = player.page
    if page.evaluate(CAN_CONTINUE):
        page.locator("#btn-continue").click()
        return True
    if page.evaluate(MY_DECISION):
        tv = player.tv()
        action, slot = player.choose(tv)
        player._act(action, slot, "click")
        player.wait_version_after(tv["version"])
        return True
    return False


def _play_to_the_end(players: list[Player], limit_s: float = 150) -> None:
    deadline = time.monotonic() + limit_s
    while not all(p.page.evaluate(MATCH_OVER) for p in players):
        if not any([_step(p) for p in players if not p.page.evaluate(MATCH_OVER)]):
            players[0].page.wait_for_timeout(50)
        assert time.monotonic() < deadline, "the match did not end in time"


def test_a_spectator_watches_by_link_with_every_rack_face_down(
    new_context: Callable[..., BrowserContext], server_url: str
) -> None:
    host_page: Page = watch(new_context().new_page())
    fan_page: Page = watch(new_context().new_page())
    host = Player(host_page, server_url)
    host.open_home()
    host_page.fill("#name", "Hana")
    host.set_rules(FAST_RULES, players=3)
    host_page.locator("#opt-spectators").check()
    host_page.click("#btn-create")
    expect(host_page.locator("#screen-lobby")).to_be_visible()
    code = table_code(host_page)
    link = host_page.locator("#lobby-watch-link").input_value()
    assert link == f"{server_url}/?watch={code}"

    # A second spectator types the code into the home screen's Watch form.
    other_page: Page = watch(new_context().new_page())
    Player(other_page, server_url).open_home()
    other_page.fill("#watch-code", code.lower())
    other_page.click("#btn-watch")
    expect(other_page.locator("#screen-lobby")).to_be_visible()
    fan_page.goto(link)
    expect(fan_page.locator("#screen-lobby")).to_be_visible()
    expect(fan_page.locator("#lobby-note")).to_contain_text("You are watching")
    expect(fan_page.locator("#btn-start")).to_be_hidden()
    host_page.click("#btn-start")

    expect(fan_page.locator("#screen-table")).to_be_visible()
    expect(fan_page.locator("#opponents .opp")).to_have_count(3)  # every seat, face down
    expect(fan_page.locator("#opponents")).to_contain_text("Hana")
    expect(fan_page.locator("#my-rack")).to_be_hidden()
    expect(fan_page.locator("#table-info")).to_contain_text(code)
    expect(fan_page.locator("#scores tr")).to_have_count(4)
    expect(other_page.locator("#opponents .opp")).to_have_count(3)
    expect(host_page.locator("#my-rack")).to_be_visible()
    expect(host_page.locator("#table-info .watchers")).to_have_text("2 watching")
    while not host_page.evaluate(MATCH_OVER):
        _step(host) or host_page.wait_for_timeout(50)
        seen = fan_page.evaluate(SPECTATOR_SHOWS)
        assert seen["seat"] == -1 and seen["rack"] == [] and seen["legal"] == []
        if seen["status"] == "playing":
            assert set(seen["shown"]) <= set(seen["known"]), seen  # nothing but the public
    expect(fan_page.locator("#match-over")).to_be_visible()
    expect(fan_page.locator("#btn-again")).to_be_hidden()  # a rematch is for the players
    final = fan_page.evaluate("window.rackem.state.tv")
    assert final["view"]["scores"] == host.tv()["view"]["scores"]
    assert final["view"]["seed"] == host.tv()["view"]["seed"]
    assert host_page.errors == [] and fan_page.errors == []  # type: ignore[attr-defined]


def test_play_again_seats_both_players_at_a_new_match_that_verifies(
    new_context: Callable[..., BrowserContext], server_url: str
) -> None:
    host_page: Page = watch(new_context().new_page())
    guest_page: Page = watch(new_context().new_page())
    host, guest = Player(host_page, server_url), Player(guest_page, server_url)
    host.open_home()
    host_page.fill("#name", "Hana")
    host.set_rules(FAST_RULES, players=2)
    host_page.click("#btn-create")
    expect(host_page.locator("#screen-lobby")).to_be_visible()
    code = table_code(host_page)
    guest.open_home()
    guest_page.fill("#name", "Gil")
    guest_page.fill("#join-code", code)
    guest_page.click("#btn-join")  # the table is full: it starts by itself
    for page in (host_page, guest_page):
        expect(page.locator("#screen-table")).to_be_visible()
    _play_to_the_end([host, guest])
    first = host.tv()

    host_page.click("#btn-again")
    expect(host_page.locator("#screen-lobby")).to_be_visible()
    expect(host_page.locator("#lobby-title")).to_have_text("Rematch")
    expect(host_page.locator("#lobby-note")).to_contain_text("Waiting for Gil")
    expect(host_page.locator("#lobby-seats li")).to_have_count(2)
    offer = guest_page.locator("#rematch-offer")
    expect(offer).to_contain_text("Hana wants a rematch")
    guest_page.click("#btn-again")
    for page in (host_page, guest_page):
        expect(page.locator("#screen-table")).to_be_visible()
        page.wait_for_function(
            f"window.rackem.state.tv && window.rackem.state.tv.table_id !== {first['table_id']!r}"
        )
    again = host.tv()
    assert again["code"] != first["code"]
    assert again["view"]["commitment"] != first["view"]["commitment"]
    assert [s["name"] for s in again["seats"]] == [s["name"] for s in first["seats"]]
    assert again["view"]["rules"] == first["view"]["rules"]

    _play_to_the_end([host, guest])
    for page in (host_page, guest_page):
        page.click("#btn-verify")
        expect(page.locator("#verify-result")).to_contain_text("✓ Verified", timeout=20_000)
    assert host_page.errors == [] and guest_page.errors == []  # type: ignore[attr-defined]
