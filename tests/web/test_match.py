"""A whole match against the computer, played by clicks, through to the fair-deal check."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from rackcore import verify

from .axe import assert_accessible
from .conftest import DESKTOP, PHONE_SIZE
from .player import MATCH_OVER, Player

pytestmark = pytest.mark.browser


def test_a_whole_match_against_the_computer_played_by_clicks(page: Page, server_url: str) -> None:
    me = Player(page, server_url)
    me.new_game("Ann", {"target": 100, "run_to_go_out": 0, "turn_cap": 60})
    expect(page.locator("#turn-banner")).to_be_visible()
    # the game's start moves focus to the table (not the page's body)
    expect(page.locator("#table-title")).to_be_focused()
    expect(page.locator("#my-rack .slot")).to_have_count(10)
    expect(page.locator("#opponents .opp")).to_have_count(1)
    commitment = me.tv()["view"]["commitment"]
    assert re.fullmatch(r"[0-9a-f]{64}", commitment)

    # the first turn by dragging the drawn card onto a slot
    me.wait_my_decision("draw")
    page.locator("#stock").click()
    tv = me.wait_my_decision("resolve")
    rack = me.rack()
    page.locator("#held .card").drag_to(page.locator('#my-rack .slot[data-slot="3"]'))
    me.wait_version_after(tv["version"])
    assert me.rack() == [*rack[:3], tv["view"]["held"], *rack[4:]]

    seen_round_over = False
    while not page.evaluate(MATCH_OVER):
        me.play_until(f"{MATCH_OVER} || !document.getElementById('round-over').hidden")
        if page.evaluate(MATCH_OVER):
            break
        if not seen_round_over:
            assert_accessible(page, "round over")
        seen_round_over = True
        # every rack revealed, with this round's points and the totals
        expect(page.locator("#round-reveal .reveal-row")).to_have_count(2)
        expect(page.locator("#round-reveal .reveal-row .reveal-cards").first).to_contain_text(
            re.compile(r"\d")
        )
        page.locator("#btn-continue").click()
        expect(page.locator("#round-over")).to_be_hidden(timeout=20_000)
    assert seen_round_over or len(me.tv()["view"]["rounds"]) == 1

    tv = me.tv()
    v = tv["view"]
    assert tv["status"] == "finished"
    title = page.locator("#match-title")
    if v["winner"] == v["seat"]:
        expect(title).to_have_text("You win the match!")
    else:
        expect(title).to_have_text(re.compile(r"^Bot .+ wins the match$"))
    # the commitment shown at the start, and the revealed seed that hashes to it
    expect(page.locator("#fair-commitment")).to_have_text(commitment)
    seed = page.locator("#fair-seed").inner_text()
    assert hashlib.sha256(bytes.fromhex(seed)).hexdigest() == commitment

    assert_accessible(page, "match over")
    # on a phone, the check's answer shows without scrolling for it
    page.set_viewport_size(PHONE_SIZE)
    page.locator("#btn-verify").click()
    expect(page.locator("#verify-result")).to_contain_text("Verified", timeout=20_000)
    expect(page.locator("#verify-result")).to_have_class(re.compile(r"\bok\b"))
    expect(page.locator("#verify-result")).to_be_in_viewport(ratio=1)
    if len(v["rounds"]) == 1:
        expect(page.locator("#verify-result")).to_contain_text("the deal follows from it")
    else:
        expect(page.locator("#verify-result")).to_contain_text(f"all {len(v['rounds'])} deals")
    page.set_viewport_size(DESKTOP)

    with page.expect_download() as download:
        page.locator("#btn-download").click()
    log = json.loads(Path(download.value.path()).read_text())
    assert log["format"] == "rackem-match/1"
    assert log["seed"] == seed and log["commitment"] == commitment
    report = verify(log)
    assert report["valid"] and report["finished"]
    assert report["scores"] == v["scores"]
    assert max(v["scores"]) >= 100

    # the replay viewer, linked from the match-over screen, with the seats' names
    page.locator("#btn-replay").click()
    page.wait_for_url(re.compile(rf"/replay/{tv['table_id']}#seats=Ann,"))
    expect(page.locator("#replay-status")).to_contain_text("✓ Verified")
    expect(page.locator("#racks .rack-who b").first).to_have_text("Ann")
    page.keyboard.press("End")
    totals = page.locator("#scores .totals td").all_inner_texts()
    assert [int(t) for t in totals] == v["scores"]
    assert page.errors == []  # type: ignore[attr-defined]
