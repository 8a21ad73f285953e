"""The invitation a share link opens: who is waiting at a table open to spectators, and
nothing more (and no error) at a table that is not; Join works from it either way."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, WebSocket, expect

from .axe import assert_accessible
from .conftest import WAIT_MS, watch
from .player import FAST_RULES, Player, table_code

pytestmark = pytest.mark.browser


@dataclass
class Socket:
    """One WebSocket the page opened: the messages the server sent on it, and whether it closed."""

    received: list[dict[str, Any]] = field(default_factory=list)
    closed: bool = False


def sockets_of(page: Page) -> list[Socket]:
    """Record every WebSocket the page opens from now on, in the order it opens them."""
    opened: list[Socket] = []

    def on_socket(ws: WebSocket) -> None:
        sock = Socket()
        opened.append(sock)
        ws.on("framereceived", lambda payload: sock.received.append(json.loads(payload)))
        ws.on("close", lambda _ws: setattr(sock, "closed", True))

    page.on("websocket", on_socket)
    return opened


def watch_socket(page: Page, opened: list[Socket]) -> Socket:
    """The page's socket that sent `watch` (the one the server answers `watching` or an error)."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while True:
        for sock in opened:
            if any(m["type"] in ("watching", "error") for m in sock.received):
                return sock
        assert time.monotonic() < deadline, [s.received for s in opened]
        page.wait_for_timeout(50)


def wait_closed(page: Page, sock: Socket) -> None:
    deadline = time.monotonic() + WAIT_MS / 1000
    while not sock.closed:
        assert time.monotonic() < deadline, "the invitation's watching socket stayed open"
        page.wait_for_timeout(50)


def create(page: Page, server_url: str, spectators: bool, players: int) -> str:
    host = Player(page, server_url)
    host.open_home()
    page.fill("#name", "Hana")
    host.set_rules(FAST_RULES, players=players)
    page.locator("#opt-spectators").set_checked(spectators)
    page.click("#btn-create")
    expect(page.locator("#screen-lobby")).to_be_visible()
    return table_code(page)


def test_an_invitation_to_a_table_open_to_spectators_shows_who_is_waiting_live(
    new_context: Callable[..., BrowserContext], server_url: str
) -> None:
    host_page: Page = watch(new_context().new_page())
    guest_page: Page = watch(new_context().new_page())
    code = create(host_page, server_url, spectators=True, players=3)

    opened = sockets_of(guest_page)
    guest_page.goto(f"{server_url}/?code={code}")
    expect(guest_page.locator("#screen-invite")).to_be_visible()
    expect(guest_page.locator("#invite-code")).to_have_text(code)
    seats = guest_page.locator("#invite-seats li")
    expect(seats).to_have_count(3)
    expect(seats.nth(0)).to_contain_text("Hana")
    expect(seats.nth(0)).to_contain_text("host")
    expect(seats.nth(1)).to_have_text("Free seat")
    expect(seats.nth(2)).to_have_text("Free seat")
    expect(guest_page.locator("#invite-status")).to_have_text("2 free seats: join to take one.")
    expect(guest_page.locator("#invite-rules")).to_contain_text("3 players · play to 50")
    expect(guest_page.locator("#invite-name-note")).to_contain_text("anyone watching")
    assert_accessible(guest_page, "the invitation with who is waiting")
    peek = watch_socket(guest_page, opened)
    assert peek is not opened[0]  # the page's own connection never watches
    assert not any(m["type"] in ("watching", "error") for m in opened[0].received)
    # a spectator's lobby: names only, no card, token or seed
    lobbies = [m for m in peek.received if m["type"] == "lobby"]
    assert lobbies and all(m["you"] == -1 for m in lobbies)
    assert not any(key in m for m in lobbies for key in ("token", "view", "seed"))

    # someone else sits down: the invitation follows
    other_page: Page = watch(new_context().new_page())
    Player(other_page, server_url).open_home()
    other_page.fill("#name", "Ivy")
    other_page.fill("#join-code", code)
    other_page.click("#btn-join")
    expect(other_page.locator("#screen-lobby")).to_be_visible()
    expect(seats.nth(1)).to_contain_text("Ivy")
    expect(seats.nth(2)).to_have_text("Free seat")
    expect(guest_page.locator("#invite-status")).to_have_text("1 free seat: join to take one.")

    # Join from the invitation: the last seat, so the table starts by itself
    guest_page.fill("#invite-name", "Gil")
    guest_page.click("#btn-invite-join")
    wait_closed(guest_page, peek)
    for page in (host_page, guest_page, other_page):
        expect(page.locator("#screen-table")).to_be_visible()
    expect(guest_page.locator("#opponents")).to_contain_text("Hana")
    expect(guest_page.locator("#opponents")).to_contain_text("Ivy")
    expect(host_page.locator("#opponents")).to_contain_text("Gil")
    assert Player(guest_page, server_url).tv()["view"]["seat"] == 2
    assert not opened[0].closed  # the page's own connection carried on
    for page in (host_page, guest_page, other_page):
        assert page.errors == []  # type: ignore[attr-defined]


def test_an_invitation_to_a_table_closed_to_spectators_shows_code_name_and_join_only(
    new_context: Callable[..., BrowserContext], server_url: str
) -> None:
    host_page: Page = watch(new_context().new_page())
    guest_page: Page = watch(new_context().new_page())
    code = create(host_page, server_url, spectators=False, players=2)

    opened = sockets_of(guest_page)
    guest_page.goto(f"{server_url}/?code={code}")
    expect(guest_page.locator("#screen-invite")).to_be_visible()
    peek = watch_socket(guest_page, opened)
    assert [m["code"] for m in peek.received if m["type"] == "error"] == ["no_spectators"]
    assert not any(m["type"] == "lobby" for m in peek.received)
    wait_closed(guest_page, peek)  # refused: the invitation stops asking
    expect(guest_page.locator("#invite-code")).to_have_text(code)
    expect(guest_page.locator("#invite-waiting")).to_be_hidden()
    expect(guest_page.locator("#invite-name-note")).to_have_text(
        "Shown only to the players at this table."
    )
    expect(guest_page.locator("#toast")).to_be_hidden()  # the refusal is not the player's error
    expect(guest_page.locator("#invite-name")).to_be_focused()

    guest_page.keyboard.type("Gil")
    guest_page.keyboard.press("Enter")  # the second seat: the table starts by itself
    for page in (host_page, guest_page):
        expect(page.locator("#screen-table")).to_be_visible()
    expect(host_page.locator("#opponents")).to_contain_text("Gil")
    assert not opened[0].closed
    assert host_page.errors == [] and guest_page.errors == []  # type: ignore[attr-defined]


def test_an_invitation_says_when_the_table_it_shows_has_started_without_you(
    new_context: Callable[..., BrowserContext], server_url: str
) -> None:
    host_page: Page = watch(new_context().new_page())
    late_page: Page = watch(new_context().new_page())
    code = create(host_page, server_url, spectators=True, players=2)
    opened = sockets_of(late_page)
    late_page.goto(f"{server_url}/?code={code}")
    expect(late_page.locator("#invite-seats li")).to_have_count(2)
    peek = watch_socket(late_page, opened)

    other_page: Page = watch(new_context().new_page())
    Player(other_page, server_url).open_home()
    other_page.fill("#name", "Ivy")
    other_page.fill("#join-code", code)
    other_page.click("#btn-join")  # the last seat: the match starts
    expect(late_page.locator("#invite-status")).to_have_text(
        "This table's match has already started."
    )
    expect(late_page.locator("#invite-seats li")).to_have_count(0)
    wait_closed(late_page, peek)  # it stops watching: an invitation follows no match
    assert late_page.errors == []  # type: ignore[attr-defined]
