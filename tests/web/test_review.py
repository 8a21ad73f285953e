"""The coach's review in the web client: the match-over screen's accuracy, and the replay
viewer's marks, better moves and jumps to the mistakes, by keys and by taps.

A person plays a whole match against the computer through the page; the gateway's
``/review/{table_id}.json?seat=N`` (the bot service's review of that seat) is what the
page must show: its accuracy on the match-over screen, then, after *Review my play*, every
decision marked in the replay (a sign and a word), the better move and its cost at each
mistake, and ``N``/``P`` (or the buttons, tapped on a phone) going from mistake to mistake.
A review the server cannot give leaves the replay as it was, with a quiet note.
"""

from __future__ import annotations

import json
import math
import re
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, Route, expect

from .axe import assert_accessible
from .conftest import PHONE, watch
from .player import FAST_RULES, MATCH_OVER, Player
from .test_reduce import run, server, view

pytestmark = pytest.mark.browser

SIGN = {"best": "✓", "good": "○", "inaccuracy": "?!", "mistake": "?", "blunder": "??"}
SLIPS = ("inaccuracy", "mistake", "blunder")
REVIEW_WAIT_MS = 90_000  # a review takes the bot service a few seconds on a busy machine


def test_the_reducer_keeps_each_seats_review_of_the_match_shown(js: Page) -> None:
    summary = {"decisions": 3, "accuracy": 90.0, "marks": {}, "costliest": [0]}

    def reviewed(seat: int, state: str, table_id: str = "t1") -> dict[str, Any]:
        done = state == "ok"
        review = {"table_id": table_id, "seat": seat, "state": state}
        return {"type": "reviewed", "review": {**review, "summary": summary if done else None}}

    out = run(
        js,
        [
            server(view(9, status="finished")),
            reviewed(1, "asking"),
            reviewed(0, "asking"),
            reviewed(1, "ok"),
            reviewed(0, "none"),
            reviewed(0, "ok", table_id="t0"),  # another table's: nothing
            server(view(0, table_id="t2")),  # a new table forgets them
        ],
    )
    reviews = [state["reviews"] for state in out["states"]]
    assert reviews[0] == []
    assert [(r["seat"], r["state"]) for r in reviews[2]] == [(0, "asking"), (1, "asking")]
    assert [(r["seat"], r["state"]) for r in reviews[4]] == [(0, "none"), (1, "ok")]
    assert reviews[4][1]["summary"] == summary
    assert out["same"][5]
    assert reviews[6] == []
    assert out["untouched"]


def fetch_review(base: str, table_id: str, seat: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"{base}/review/{table_id}.json?seat={seat}", timeout=60) as r:
        review: dict[str, Any] = json.loads(r.read())
    return review


def moves_shown(page: Page) -> int:
    """The move the replay shows (its number in the log, 1 for the first)."""
    return int(page.locator("#viewer").get_attribute("data-moves") or "-1")


@pytest.fixture(scope="module")
def reviewed(browser: Any, server_url: str) -> dict[str, Any]:
    """A match played to its end through the page, its match-over screen checked: the
    replay's link with the review, the table's id and seat, and the review itself."""
    context = browser.new_context(viewport={"width": 1366, "height": 820}, service_workers="block")
    context.set_default_timeout(20_000)
    page = watch(context.new_page())
    try:
        me = Player(page, server_url)
        me.new_game("Ann", FAST_RULES)
        me.play_until(MATCH_OVER)
        tv = me.tv()
        assert tv["status"] == "finished"
        table_id, seat = tv["table_id"], tv["view"]["seat"]

        # the match-over screen: this seat's accuracy (the only person here), and the link
        rows = page.locator("#review-seats li")
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text("accuracy", timeout=REVIEW_WAIT_MS)
        review = fetch_review(server_url, table_id, seat)
        assert review["seat"] == seat and review["format"] == "rackem-review/1"
        summary = review["summary"]
        accuracy = math.floor(summary["accuracy"] * 10 + 0.5) / 10  # as the page rounds it
        expect(rows.first).to_contain_text(re.compile(rf"^You: {accuracy:g}% accuracy "))
        expect(rows.first).to_contain_text(f"{summary['decisions']} decisions")
        for mark, sign in SIGN.items():
            expect(rows.first).to_contain_text(f"{sign} {summary['marks'][mark]} {mark}")
        expect(page.locator("#review-title")).to_have_text("How you played")
        link = page.locator("#btn-review")
        expect(link).to_be_visible()
        expect(link).to_have_text("Review my play")
        assert_accessible(page, "match over, with the review")
        href = link.get_attribute("href") or ""
        assert re.fullmatch(rf"/replay/{table_id}#seats=Ann,[^&]+&review={seat}", href), href
        assert page.errors == []  # type: ignore[attr-defined]
        return {"href": href, "table_id": table_id, "seat": seat, "review": review}
    finally:
        context.close()


def in_order(review: dict[str, Any]) -> list[dict[str, Any]]:
    return sorted(review["decisions"], key=lambda d: d["at"])


def test_review_my_play_marks_every_decision_and_steps_through_the_mistakes_by_keys(
    page: Page, server_url: str, reviewed: dict[str, Any]
) -> None:
    review = reviewed["review"]
    decisions = in_order(review)
    page.goto(server_url + reviewed["href"])
    expect(page.locator("#replay-status")).to_contain_text("✓ Verified")
    panel = page.locator("#review")
    expect(panel).to_be_visible(timeout=REVIEW_WAIT_MS)
    expect(page.locator("#review-title")).to_have_text("Review of Ann's play")
    summary = review["summary"]
    expect(page.locator("#review-summary")).to_contain_text(
        f"over {summary['decisions']} decisions"
    )
    # every decision in the list, each with its sign and its word (never colour alone)
    log = page.locator("#review-log li")
    expect(log).to_have_count(len(decisions))
    marks = page.locator("#review-log .rv-mark").all_inner_texts()
    assert [m.split() for m in marks] == [[SIGN[d["mark"]], d["mark"]] for d in decisions]
    expect(page.locator("#review-keys")).to_be_visible()  # N and P are announced
    expect(page.locator("#btn-next-slip")).to_have_attribute("aria-keyshortcuts", "N")

    # the first decision by clicking it in the list: its mark under the step's words
    page.locator("#review-log .decision").first.click()
    assert moves_shown(page) == decisions[0]["at"] + 1
    expect(page.locator("#step-review")).to_contain_text(decisions[0]["mark"])
    expect(page.locator("#review-log .decision").first).to_have_attribute("aria-current", "step")
    assert_accessible(page, "replay with the review, desktop")

    # N and P from mistake to mistake: the better move in words, and its cost in turns
    slips = [d for d in decisions if d["mark"] in SLIPS]
    page.locator("body").focus()
    page.keyboard.press("Home")
    if not slips:
        expect(page.locator("#btn-next-slip")).to_be_disabled()
    for slip in slips[:3]:
        page.keyboard.press("n")
        assert moves_shown(page) == slip["at"] + 1
        line = page.locator("#step-review")
        expect(line).to_contain_text(f"{SIGN[slip['mark']]} {slip['mark']}")
        expect(line).to_contain_text(
            re.compile(
                r"Better: (draw from the stock|take the top"
                r" of the discard pile|place the \d+ in slot"
                r" \d+|throw the \d+ away|swap slots)"
            )
        )
        expect(line).to_contain_text(
            re.compile(r"cost (about [\d.]+ turns?|less than a hundredth)")
        )
    if len(slips) >= 2:
        page.keyboard.press("p")
        assert moves_shown(page) == slips[min(3, len(slips)) - 2]["at"] + 1
    assert_accessible(page, "replay at a mistake")

    # the costliest: a jump to each
    costliest = [review["decisions"][i] for i in summary["costliest"][:3]]
    jumps = page.locator("#review-costliest .jump")
    expect(jumps).to_have_count(len(costliest))
    for k, decision in enumerate(costliest):
        jumps.nth(k).click()
        assert moves_shown(page) == decision["at"] + 1
    assert page.errors == []  # type: ignore[attr-defined]


def test_the_review_by_touch_on_a_phone(
    new_context: Callable[..., BrowserContext], server_url: str, reviewed: dict[str, Any]
) -> None:
    phone = watch(new_context(**PHONE).new_page())
    decisions = in_order(reviewed["review"])
    slips = [d for d in decisions if d["mark"] in SLIPS]
    phone.goto(server_url + reviewed["href"])
    expect(phone.locator("#review")).to_be_visible(timeout=REVIEW_WAIT_MS)
    for button in phone.locator("#slip-jumps .btn").all():
        box = button.bounding_box()
        assert box is not None and box["width"] >= 44 and box["height"] >= 44
    if slips:
        phone.locator("#btn-next-slip").tap()
        assert moves_shown(phone) == slips[0]["at"] + 1
        expect(phone.locator("#step-review")).to_contain_text("Better: ")
    if len(slips) >= 2:
        phone.locator("#btn-next-slip").tap()
        assert moves_shown(phone) == slips[1]["at"] + 1
        phone.locator("#btn-prev-slip").tap()
        assert moves_shown(phone) == slips[0]["at"] + 1
    last = phone.locator("#review-log .decision").last
    last.scroll_into_view_if_needed()
    last.tap()
    assert moves_shown(phone) == decisions[-1]["at"] + 1
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["viewport"]["width"]
    assert_accessible(phone, "replay with the review, phone")
    assert phone.errors == []  # type: ignore[attr-defined]


def test_a_review_the_server_cannot_give_leaves_the_replay_alone(
    page: Page, server_url: str, reviewed: dict[str, Any]
) -> None:
    def away(route: Route) -> None:
        route.fulfill(status=503, content_type="application/json", body='{"error": {}}')

    page.route("**/review/**", away)
    page.goto(server_url + reviewed["href"])
    expect(page.locator("#replay-status")).to_contain_text("✓ Verified")
    expect(page.locator("#review-status")).to_have_text(
        "The review of Ann's play is unavailable right now."
    )
    expect(page.locator("#review")).to_be_hidden()
    page.locator("body").focus()
    page.keyboard.press("ArrowRight")
    assert moves_shown(page) >= 1
    page.keyboard.press("n")  # no review: N does nothing
    expect(page.locator("#step-review")).to_be_hidden()
    assert page.errors == []  # type: ignore[attr-defined]
