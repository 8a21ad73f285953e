"""The Daily Rack in the web client: today's deal, playing it once, the result and the board.

On a server of its own (``rackem up --data``, which makes the Daily Rack's secret): the
home screen's *Today's Daily Rack* shows the day, its commitment and an empty board;
*Play today's deal* makes the player's profile and seats it against the hard computer;
the player plays it to the end (its in-page check says the seed comes when the day
ends); the Daily Rack then shows the player's result and the entry on the board, and a
second try is refused, said on the screen. Axe-core on the screen, on a desktop and a phone.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import BrowserContext, expect

from .axe import assert_accessible
from .conftest import PHONE, watch
from .player import CAN_CONTINUE, MATCH_OVER, MY_DECISION, Player
from .test_profile import KEY, STATE, ProfileServer, sideways, start_profile_server

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def profile_server() -> Iterator[ProfileServer]:
    yield from start_profile_server()


def test_the_daily_rack_is_played_once_and_its_result_shows(
    new_context: Callable[..., BrowserContext], profile_server: ProfileServer
) -> None:
    base = profile_server.url
    page = watch(new_context().new_page())
    page.goto(base)
    page.fill("#name", "Dee")
    page.locator("#name").dispatch_event("change")
    page.locator("#btn-daily").click()
    expect(page.locator("#screen-daily")).to_be_visible()
    expect(page.locator("#daily-title")).to_be_focused()
    expect(page.locator("#daily-day")).to_have_text(re.compile(r"Today's deal: \d{4}-\d\d-\d\d"))
    expect(page.locator("#daily-you")).to_contain_text("not played today's deal yet")
    expect(page.locator("#daily-rows")).to_contain_text("Nobody has finished")
    commitment = page.locator("#daily-commitment").text_content() or ""
    assert re.fullmatch(r"[0-9a-f]{64}", commitment)
    assert_accessible(page, "the Daily Rack, not played yet")

    page.locator("#btn-play-daily").click()
    expect(page.locator("#screen-table")).to_be_visible()
    page.wait_for_function(f"{STATE}.status === 'bound'")
    assert page.evaluate(KEY) is not None  # playing it made the profile
    tv = page.evaluate("window.rackem.state.tv")
    assert [s["kind"] for s in tv["seats"]] == ["human", "bot"]
    assert tv["view"]["commitment"] == commitment  # today's deal, as published

    # the player plays the deal to the end through the page (a player who left would
    # have no result: the computer's play is not theirs, docs/daily.md)
    player = Player(page, base)
    draw = f"{MY_DECISION} && window.rackem.state.tv.view.phase === 'draw'"
    deadline = time.monotonic() + 240
    while not page.evaluate(MATCH_OVER):
        if page.evaluate(CAN_CONTINUE):
            page.locator("#btn-continue").click()
        elif page.evaluate(draw):
            player.play_turn()
        else:
            page.wait_for_timeout(50)
        assert time.monotonic() < deadline, "the daily match never finished"
    # its fairness check waits for the day's seed, and says so
    page.locator("#btn-verify").click()
    expect(page.locator("#verify-result")).to_contain_text("secret until the day ends")
    page.locator("#btn-home").click()
    expect(page.locator("#screen-home")).to_be_visible()

    # the Daily Rack shows the result at once (within the moments the archiving takes)
    deadline = time.monotonic() + 30
    while True:
        page.locator("#btn-daily").click()
        page.wait_for_function(f"{STATE}.daily !== null && {STATE}.asked.length === 0")
        if page.evaluate(f"Boolean({STATE}.daily.you && {STATE}.daily.board.length)"):
            break
        assert time.monotonic() < deadline, "the daily result never showed"
        page.wait_for_timeout(500)
        page.go_back()
    expect(page.locator("#daily-you")).to_have_text(
        re.compile(r"Your result today: \d+ points in \d+ turns of your own")
    )
    expect(page.locator("#btn-play-daily")).to_be_hidden()
    expect(page.locator("#daily-rows tr").first.locator("td")).to_have_text(
        ["1", re.compile(r"Dee|Anonymous"), re.compile(r"^\d+$"), re.compile(r"^\d+$")]
    )
    assert_accessible(page, "the Daily Rack, played")

    # one entry a day: a second try is refused and said on the screen
    page.evaluate("window.rackem.conn.send({type: 'play_daily'})")  # past the hidden button
    expect(page.locator("#daily-note")).to_contain_text("played today's Daily Rack already")
    expect(page.locator("#screen-daily")).to_be_visible()
    expect(page.locator("#toast")).to_be_hidden()

    phone = watch(new_context(**PHONE).new_page())
    phone.goto(base + "/#daily")
    expect(phone.locator("#daily-day")).to_be_visible()
    expect(phone.locator("#daily-rows tr")).to_have_count(1)
    problems = sideways(phone, "#screen-daily")
    assert problems == [], "\n".join(problems)
    assert_accessible(phone, "the Daily Rack on a phone")
    for p in (page, phone):
        assert p.errors == []  # type: ignore[attr-defined]
