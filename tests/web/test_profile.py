"""The player's profile in the web client: the You screen, Link another device, Forget me.

A server of its own (``profile_server``: ``rackem up --data DIR``, so its SQLite archive
is a fresh file, with quick-match tables filled by the computer after a second and fast
computer players) answers the page's profile messages (docs/protocol.md). The page keeps
the profile's key in ``localStorage`` and binds it on every connection; the reducer's
part (``js/profile-state.js``) is run in Chromium as well, and a gateway that keeps no
profiles (every profile message answered ``unavailable``, by a WebSocket route) leaves
the rest of the page working.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, WebSocketRoute, expect

from .axe import assert_accessible
from .conftest import PHONE, ROOT, _printed_url, _wait_ready, watch
from .player import FAST_RULES, Player
from .test_reduce import run, server

pytestmark = pytest.mark.browser

STATE = "window.rackem.state.profile"
UP = [sys.executable, "-m", "rackem.cli", "up", "--port", "0", "--no-browser"]
KEY = "localStorage.getItem('rackem.profile')"


@dataclass(frozen=True)
class ProfileServer:
    url: str
    data: Path  # rackem up's --data: archive.sqlite3, daily.secret


def start_profile_server(**env: str) -> Iterator[ProfileServer]:
    """``rackem up --data`` on a fresh directory, for a test module (its archive a new file)."""
    settings = {
        **os.environ,
        "BOT_DELAY_MS": "20",  # a match left to the computer ends in seconds
        "DECISION_MS": "8000",
        "GAMES_PER_IP": "0",
        "FILL_MS": "1000",  # a quick match starts with the computer soon
        "FILL_LONE_MS": "1000",
        "LEVEL_OPEN_MS": "0",
        "LOG_LEVEL": "WARNING",
        **env,
    }
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        log = Path(tmp) / "rackem-up.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [*UP, "--data", str(data)],
                cwd=ROOT,
                env=settings,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
            try:
                url = _printed_url(proc, log)
                _wait_ready(url, proc, log)
                yield ProfileServer(url, data)
            finally:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


@pytest.fixture(scope="module")
def profile_server() -> Iterator[ProfileServer]:
    yield from start_profile_server()


SIDEWAYS = """root => {
    const width = document.documentElement.clientWidth;
    const out = [];
    if (document.documentElement.scrollWidth > width) out.push(`the page scrolls sideways`);
    for (const node of document.querySelector(root).querySelectorAll('*')) {
        const box = node.getBoundingClientRect();
        if (!box.width || node.closest('.sr-only')) continue;
        if (box.left < -0.5 || box.right > width + 0.5) {
            out.push(`${node.tagName}#${node.id}.${node.className}: ${box.left}..${box.right}`);
        }
    }
    return out;
}"""


def sideways(page: Page, root: str) -> list[str]:
    """What in ``root`` spills out of the window's width (a screen that scrolls down is fine)."""
    found: list[str] = page.evaluate(SIDEWAYS, root)
    return found


def profile(page: Page) -> dict[str, Any]:
    found: dict[str, Any] = page.evaluate(STATE)
    return found


def open_you(page: Page) -> None:
    page.locator("#btn-you").click()
    expect(page.locator("#screen-you")).to_be_visible()
    expect(page.locator("#you-title")).to_be_focused()


def start_profile(page: Page, base: str) -> dict[str, Any]:
    """A new page at /#you whose player starts a profile: the profile's state once bound."""
    page.goto(base + "/#you")
    expect(page.locator("#screen-you")).to_be_visible()
    expect(page.locator("#you-none")).to_be_visible()
    page.locator("#btn-make-profile").click()
    expect(page.locator("#you-profile")).to_be_visible()
    page.wait_for_function(f"{STATE}.history !== null")
    return profile(page)


# -- the reducer's part ------------------------------------------------------------------------


def me(pid: str = "p0123456789abcdef", **fields: Any) -> dict[str, Any]:
    line = {
        "played": 0,
        "won": 0,
        "rounds_won": 0,
        "mean_own_turns_to_go_out": None,
        "best_bonus_run": 0,
    }
    return {
        "type": "profile",
        "id": pid,
        "name": "Ann",
        "public": False,
        "rating": {"value": 1500, "provisional": True},
        "stats": {**line, "by_players": {}},
    } | fields


def asked(kind: str) -> dict[str, Any]:
    return {"type": "profile_asked", "kind": kind}


def error(code: str, **fields: Any) -> dict[str, Any]:
    return server({"type": "error", "code": code, "message": "x", **fields})


def test_the_reducer_answers_each_profile_request_and_knows_its_refusals(js: Page) -> None:
    out = run(
        js,
        [
            asked("bind"),  # 0: a stored key sent
            error("bad_profile"),  # 1: refused: no profile
            asked("make"),  # 2
            asked("history"),  # 3
            server(me(key="k" * 32)),  # 4: made; the key is not kept in the state
            server({"type": "history", "matches": []}),  # 5
            asked("update"),  # 6: a name the server refuses
            error("bad_name"),  # 7
            error("illegal_move", id="m1"),  # 8: a move's refusal is not the profile's
            asked("link"),  # 9
            error("bad_link_code"),  # 10
            asked("link_code"),  # 11
            server({"type": "link_code", "code": "ABC234", "expires_ms": 5}),  # 12
            {"type": "greeted", "loading": None, "start": None},  # 13: a new connection
            asked("leaderboard"),  # 14
            error("unavailable"),  # 15: the oldest request on its way
            asked("forget"),  # 16
            server({"type": "forgotten"}),  # 17
        ],
    )
    states = [s["profile"] for s in out["states"]]
    assert states[0]["status"] == "binding" and states[0]["asked"] == ["bind"]
    assert states[1]["status"] == "none" and states[1]["asked"] == []
    assert states[2]["status"] == "making"
    assert states[4]["status"] == "bound" and states[4]["asked"] == ["history"]
    assert "key" not in states[4]["me"] and states[4]["me"]["name"] == "Ann"
    assert states[5]["history"] == [] and states[5]["asked"] == []
    assert states[7]["note"].startswith("Names are 1 to 20") and states[7]["status"] == "bound"
    assert out["states"][8]["pending"] is None and states[8] == states[7]  # the table's error path
    assert "wrong, used or expired" in states[10]["note"] and states[10]["status"] == "bound"
    assert states[12]["link"] == {"code": "ABC234", "expires_ms": 5}
    assert states[13]["asked"] == []
    assert states[15]["boardNote"] == "The leaderboard is not available right now."
    assert states[17]["status"] == "none" and states[17]["me"] is None
    assert states[17]["forgotten"] and states[17]["link"] is None
    assert out["untouched"]


def test_the_reducer_keeps_playing_without_profiles_and_says_why_a_daily_is_refused(
    js: Page,
) -> None:
    out = run(
        js,
        [
            asked("make"),
            error("unavailable"),  # 1: no profiles here: the page plays on
            {"type": "show", "screen": "loading", "loading": "Dealing today's Daily Rack…"},
            asked("play_daily"),
            error("daily_played"),  # 4: back on the Daily Rack screen, saying why
            asked("play_daily"),
            server({"type": "seated", "token": "t", "seat": 0, "code": "C", "table_id": "t1"}),
            error("busy"),  # 7: nothing of the profile's on its way: the table's error
        ],
        {"screen": "daily"},
    )
    states = out["states"]
    assert states[1]["profile"]["status"] == "unavailable"
    assert "you can still play" in states[1]["profile"]["note"]
    assert states[4]["screen"] == "daily"
    assert "already" in states[4]["profile"]["dailyNote"]
    assert states[6]["profile"]["asked"] == [] and states[6]["loadingText"] == "Taking a seat…"
    assert states[7]["profile"] == states[6]["profile"] and states[7]["screen"] == "home"


def test_the_rating_chart_draws_the_rated_matches_oldest_first(js: Page) -> None:
    history = [
        {"rated": True, "rating_before": 1530, "rating_after": 1560},
        {"rated": False, "rating_before": None, "rating_after": None},
        {"rated": True, "rating_before": 1500, "rating_after": 1530},
    ]
    out = js.evaluate(
        """async (history) => {
            const { ratingChart, ratingCourse } = await import('/js/chart.js');
            const course = ratingCourse(history);
            const chart = ratingChart(course);
            return { course, points: chart.querySelector('polyline').getAttribute('points'),
                     label: chart.getAttribute('aria-label'), none: ratingChart([1500]) };
        }""",
        history,
    )
    assert out["course"] == [1500, 1530, 1560]
    ys = [float(p.split(",")[1]) for p in out["points"].split()]
    assert ys[0] > ys[1] > ys[2]  # up the chart as the rating rises
    assert "from 1500 to 1560" in out["label"]
    assert out["none"] is None


# -- the page against a real server ----------------------------------------------------------------


def test_a_first_quick_match_makes_a_profile_and_you_shows_it(
    new_context: Callable[..., BrowserContext], profile_server: ProfileServer
) -> None:
    page = watch(new_context().new_page())
    base = profile_server.url
    player = Player(page, base)
    player.open_home()
    assert page.evaluate(KEY) is None
    expect(page.locator("#btn-you")).to_have_text("You")
    page.fill("#name", "Ann")
    page.locator("#btn-quick").click()
    # the quick match is the first game: the profile is made (quietly) before it
    expect(page.locator("#screen-table")).to_be_visible()
    page.wait_for_function(f"{STATE}.status === 'bound'")
    key = page.evaluate(KEY)
    assert re.fullmatch(r"[0-9a-f]{32}", key)
    mine = profile(page)["me"]
    assert mine["name"] == "Ann" and re.fullmatch(r"p[0-9a-f]{16}", mine["id"])
    table_id = player.tv()["table_id"]
    expect(page.locator("#toast")).to_be_hidden()

    # leave: the computer finishes the match (quickly), which the profile's history keeps
    page.once("dialog", lambda d: d.accept())
    page.locator("#btn-leave").click()
    expect(page.locator("#screen-home")).to_be_visible()
    expect(page.locator("#btn-you")).to_have_text("You · 1500")
    open_you(page)
    deadline = time.monotonic() + 90
    while not page.evaluate(f"({STATE}.history || []).length"):
        assert time.monotonic() < deadline, "the match never reached the history"
        page.wait_for_timeout(1000)
        page.go_back()
        expect(page.locator("#screen-home")).to_be_visible()
        open_you(page)
    expect(page.locator("#you-rating")).to_have_text("Rating 1500")
    expect(page.locator("#you-provisional")).to_be_visible()
    expect(page.locator("#you-name")).to_have_value("Ann")
    item = page.locator("#you-history li").first
    expect(item).to_contain_text("unrated")  # the computer's seats are not rated players
    expect(item.locator("b")).to_contain_text("Ann")
    expect(item).to_contain_text("(computer)")
    expect(item).to_contain_text(re.compile(r"\dnd of 2|1st of 2"))
    replay = item.get_by_role("link", name=re.compile("^Replay"))
    assert table_id in (replay.get_attribute("href") or "")
    stats = page.locator("#you-stats")
    expect(stats.locator("thead th")).to_have_text(["All", "2 players"])
    expect(stats.locator("tbody tr").first).to_have_text(re.compile(r"Matches played\s*1\s*1"))
    expect(page.locator("#you-chart")).to_contain_text("Play rated matches")
    assert_accessible(page, "You, with a match in the history")

    # rename, and onto the leaderboard (a choice the server keeps)
    page.fill("#you-name", "Annie")
    page.keyboard.press("Enter")
    page.wait_for_function(f"{STATE}.me.name === 'Annie'")
    expect(page.locator("#live")).to_have_text("Saved.")
    page.locator("#you-public").check()
    page.wait_for_function(f"{STATE}.me.public === true")
    page.fill("#you-name", "")
    page.keyboard.press("Enter")  # the browser's own check: a name is required
    assert page.locator("#you-name").evaluate("e => e.matches(':invalid')")
    assert profile(page)["me"]["name"] == "Annie"

    # a reload binds the same profile with the stored key, as renamed
    page.reload()
    page.wait_for_function(f"{STATE}.status === 'bound'")
    assert profile(page)["me"]["id"] == mine["id"]
    assert profile(page)["me"]["name"] == "Annie" and profile(page)["me"]["public"]
    assert page.evaluate(KEY) == key  # the server sends a key once: the same one is kept
    expect(page.locator("#you-public")).to_be_checked()

    # on a phone-sized window the screen fits, nothing sideways
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_function("innerWidth === 390")
    problems = sideways(page, "#screen-you")
    assert problems == [], "\n".join(problems)
    assert_accessible(page, "You on a narrow window")
    assert page.errors == []  # type: ignore[attr-defined]


def test_link_another_device_binds_the_same_profile_with_its_own_key(
    new_context: Callable[..., BrowserContext], profile_server: ProfileServer
) -> None:
    base = profile_server.url
    desk = watch(new_context().new_page())
    first = start_profile(desk, base)
    desk.locator("#btn-link-code").click()
    expect(desk.locator("#you-link")).to_be_visible()
    code = desk.locator("#you-link-code").inner_text()
    assert re.fullmatch(r"[A-HJ-NP-Z2-9]{6}", code), code
    expect(desk.locator("#you-link-left")).to_have_text(re.compile(r"within [45]:\d\d\."))
    assert_accessible(desk, "You, with a link code")

    # the other device: a phone with no profile, on its You screen, types the code
    phone = watch(new_context(**PHONE).new_page())
    phone.goto(base + "/#you")
    expect(phone.locator("#you-none")).to_be_visible()
    assert sideways(phone, "#screen-you") == []
    assert_accessible(phone, "You on a phone, no profile yet")
    phone.locator("#link-code").tap()
    phone.locator("#link-code").fill(code.lower())
    phone.locator("#btn-link-use").tap()
    phone.wait_for_function(f"{STATE}.status === 'bound'")
    assert profile(phone)["me"]["id"] == first["me"]["id"]
    phone_key = phone.evaluate(KEY)
    desk_key = desk.evaluate(KEY)
    assert re.fullmatch(r"[0-9a-f]{32}", phone_key) and phone_key != desk_key
    expect(phone.locator("#you-profile")).to_be_visible()
    assert sideways(phone, "#screen-you") == []
    assert_accessible(phone, "You on a phone, linked")

    # both keys open the profile: reloads bind it on each device
    for page in (phone, desk):
        page.reload()
        page.wait_for_function(f"{STATE}.status === 'bound'")
        assert profile(page)["me"]["id"] == first["me"]["id"]

    # a code works once
    other = watch(new_context().new_page())
    other.goto(base + "/#you")
    other.fill("#link-code", code)
    other.locator("#btn-link-use").click()
    expect(other.locator("#you-note")).to_contain_text("wrong, used or expired")
    assert other.evaluate(KEY) is None
    expect(other.locator("#you-none")).to_be_visible()
    for page in (desk, phone, other):
        assert page.errors == []  # type: ignore[attr-defined]


def test_forget_me_asks_first_then_the_key_is_gone_and_refused(
    new_context: Callable[..., BrowserContext], profile_server: ProfileServer
) -> None:
    page = watch(new_context().new_page())
    base = profile_server.url
    start_profile(page, base)
    key = page.evaluate(KEY)

    page.locator("#btn-forget-me").click()
    dialog = page.locator("#forget-dialog")
    expect(dialog).to_be_visible()
    expect(page.locator("#btn-forget-no")).to_be_focused()  # the safe choice first
    assert_accessible(page, "Forget me's confirmation")
    page.keyboard.press("Escape")  # changed their mind
    expect(dialog).to_be_hidden()
    assert profile(page)["status"] == "bound"

    page.locator("#btn-forget-me").click()
    page.locator("#btn-forget-yes").click()
    page.wait_for_function(f"{STATE}.forgotten")
    expect(page.locator("#you-status")).to_contain_text("Your profile is forgotten")
    expect(page.locator("#you-profile")).to_be_hidden()
    expect(page.locator("#you-none")).to_be_visible()
    expect(page.locator("#you-title")).to_be_focused()
    assert page.evaluate(KEY) is None
    assert_accessible(page, "You, forgotten")

    # the old key is refused from now on (bad_profile): the page drops it and says nothing
    page.evaluate(f"localStorage.setItem('rackem.profile', {json.dumps(key)})")
    page.reload()
    page.wait_for_function(f"{KEY} === null && {STATE}.status === 'none'")
    expect(page.locator("#toast")).to_be_hidden()
    assert page.errors == []  # type: ignore[attr-defined]


def refuse_profiles(ws: WebSocketRoute) -> None:
    """A gateway without profiles: each profile message answered ``unavailable``; the rest
    goes to the real server."""
    upstream = ws.connect_to_server()
    kinds = {"profile", "history", "leaderboard", "link_code", "forget_profile", "daily"}

    def from_page(message: str | bytes) -> None:
        kind = json.loads(message).get("type")
        if kind in kinds or kind == "play_daily":
            refusal = {"type": "error", "code": "unavailable", "message": "no profiles here"}
            ws.send(json.dumps(refusal))
        else:
            upstream.send(message)

    ws.on_message(from_page)
    upstream.on_message(lambda message: ws.send(message))


def test_without_profiles_at_the_server_the_page_plays_on(
    new_context: Callable[..., BrowserContext], profile_server: ProfileServer
) -> None:
    page = watch(new_context().new_page())
    page.route_web_socket(re.compile(r".*/ws$"), refuse_profiles)
    me_ = Player(page, profile_server.url)
    me_.new_game("Pat", FAST_RULES)  # the profile is asked for first, and refused
    page.wait_for_function(f"{STATE}.status === 'unavailable'")
    expect(page.locator("#toast")).to_be_hidden()
    me_.play_turn()
    assert page.evaluate(KEY) is None

    page.once("dialog", lambda d: d.accept())
    page.locator("#btn-leave").click()
    expect(page.locator("#screen-home")).to_be_visible()
    open_you(page)
    expect(page.locator("#you-status")).to_have_text(re.compile("not available.*still play"))
    expect(page.locator("#you-none")).to_be_hidden()
    expect(page.locator("#you-profile")).to_be_hidden()
    assert_accessible(page, "You, without profiles at the server")
    page.locator('#screen-you [data-go="leaderboard"]').click()
    expect(page.locator("#leaderboard-note")).to_have_text(
        "The leaderboard is not available right now."
    )
    page.go_back()
    page.go_back()
    expect(page.locator("#screen-home")).to_be_visible()
    page.locator("#btn-daily").click()
    expect(page.locator("#daily-note")).to_have_text("The Daily Rack is not available right now.")
    expect(page.locator("#btn-play-daily")).to_be_hidden()
    expect(page.locator("#toast")).to_be_hidden()
    assert page.errors == []  # type: ignore[attr-defined]
