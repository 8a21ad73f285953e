"""A reload or a dropped connection mid-match resumes the seat with its token."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from .player import FAST_RULES, Player

pytestmark = pytest.mark.browser


def test_a_reload_mid_match_resumes_the_same_seat(page: Page, server_url: str) -> None:
    me = Player(page, server_url)
    me.new_game("Rue", FAST_RULES)
    me.play_turn()
    me.wait_my_decision("draw")
    before = me.tv()
    rack = me.rack()
    code = page.locator("#table-info .code-info b").inner_text()

    page.reload()
    expect(page.locator("#screen-table")).to_be_visible()
    after = me.wait_my_decision("draw")
    assert after["table_id"] == before["table_id"]
    assert after["view"]["seat"] == before["view"]["seat"]
    assert me.rack() == rack
    expect(page.locator("#table-info .code-info b")).to_have_text(code)
    # and the seat still plays
    me.play_turn()
    assert page.errors == []  # type: ignore[attr-defined]


def test_a_dropped_connection_reconnects_and_resumes(page: Page, server_url: str) -> None:
    me = Player(page, server_url)
    me.new_game("Sol", FAST_RULES)
    me.wait_my_decision("draw")
    rack = me.rack()
    table_id = me.tv()["table_id"]

    page.evaluate("window.rackem.conn.ws.close()")
    expect(page.locator("#conn")).to_contain_text(re.compile("Connection lost|Reconnecting"))
    expect(page.locator("#conn")).to_be_empty(timeout=15_000)
    tv = me.wait_my_decision("draw")
    assert tv["table_id"] == table_id
    assert me.rack() == rack
    me.play_turn()
    assert page.errors == []  # type: ignore[attr-defined]


def test_a_stale_token_goes_home_with_a_readable_message(page: Page, server_url: str) -> None:
    page.goto(server_url)
    expect(page.locator("#screen-home")).to_be_visible()
    seat = {"token": "0" * 32, "seat": 0, "code": "AAAAAA", "table_id": "t0"}
    page.evaluate("seat => sessionStorage.setItem('rackem.seat', JSON.stringify(seat))", seat)
    page.reload()
    expect(page.locator("#screen-home")).to_be_visible()
    expect(page.locator("#toast")).to_contain_text("no longer available")
    assert page.evaluate("sessionStorage.getItem('rackem.seat')") is None
