"""The replay viewer (/replay/{table_id}, and a downloaded log opened by picker or drop).

A real match is played on the session's ``rackem up``: two turns by a person (the
Python client), then the seat is left to the computer, which finishes it at once. The
viewer must show what rackcore's replay of the same log gives, step by step, and the
log's final scores at the end; a tampered log is refused, and so is an id that has no
finished match.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from playwright.sync_api import Page, expect

from rackcore import Match, Move, match_from_log, verify
from rackem.client import Client, choose_move

from .axe import assert_accessible
from .conftest import PHONE

pytestmark = pytest.mark.browser

RULES = {"target": 150, "run_to_go_out": 0, "turn_cap": 60}
T = TypeVar("T")


class Loop:
    """An asyncio loop in a thread, so connections outlive one call of the sync tests."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


@pytest.fixture(scope="module")
def loop() -> Iterator[Loop]:
    running = Loop()
    yield running
    running.close()


def fetch_log(base: str, table_id: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(f"{base}/match/{table_id}.json", timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, None


async def start_match(base: str, turns: int) -> tuple[Client, str]:
    """A table against the computer where this client plays ``turns`` turns."""
    client = Client(base)
    await client.connect()
    seated = await client.create_table("Ann", RULES, level="easy", start_now=True)
    played = 0
    while played < 2 * turns:
        view = await client.wait_view(lambda v: bool(v["legal"]) and v["status"] == "playing")
        await client.move(choose_move(view), version=view["version"])
        played += 1
    return client, seated["table_id"]


@pytest.fixture(scope="module")
def finished(server_url: str, loop: Loop) -> tuple[str, dict[str, Any]]:
    """A finished match's id and its log: two human turns, then the computer plays on."""

    async def play() -> str:
        client, table_id = await start_match(server_url, turns=2)
        await client.leave()
        await client.close()
        return table_id

    table_id = loop.run(play())
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status, log = fetch_log(server_url, table_id)
        if status == 200:
            assert verify(log)["valid"]
            return table_id, log
        time.sleep(0.2)
    raise AssertionError("the match did not finish")


def open_replay(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.locator("#replay-status")).to_contain_text("✓ Verified", timeout=20_000)
    expect(page.locator("#viewer")).to_be_visible()


def step(page: Page) -> int:
    return int(page.locator("#viewer").get_attribute("data-step") or "-1")


def totals(page: Page) -> list[int]:
    return [int(t) for t in page.locator("#scores .totals td").all_inner_texts()]


def racks(page: Page) -> list[list[int]]:
    rows = page.locator("#racks .rack-row")
    return [
        [int(t) for t in rows.nth(i).locator(".rack-cards .chip").all_inner_texts()]
        for i in range(rows.count())
    ]


def replayed(log: dict[str, Any], moves: int) -> Match:
    match = match_from_log(log)
    for data in log["moves"][:moves]:
        match.apply(Move.from_dict(data))
    return match


def last_step(log: dict[str, Any]) -> int:
    """Frames: round 1 dealt, one per move, and one per later deal."""
    return len(log["moves"]) + len(log["result"]["rounds"]) - 1


def test_the_replay_steps_through_the_match_to_the_logs_final_scores(
    page: Page, server_url: str, finished: tuple[str, dict[str, Any]]
) -> None:
    table_id, log = finished
    open_replay(page, f"{server_url}/replay/{table_id}#seats=Ann,Bot%20Kit")
    expect(page.locator("h1")).to_have_text("Match replay")
    assert_accessible(page, "replay, the deal")
    slider = page.locator("#slider")
    end = last_step(log)
    expect(slider).to_have_attribute("max", str(end))

    # the deal: every rack revealed, as rackcore deals it
    assert step(page) == 0
    expect(page.locator("#step-title")).to_have_text("Round 1 dealt")
    start = replayed(log, 0)
    assert racks(page) == [list(rack) for rack in start.racks]
    assert totals(page) == [0, 0]
    expect(page.locator("#stock-count")).to_have_text(f"{len(start.stock)} cards")
    page.locator("#replay-fair summary").click()
    expect(page.locator("#replay-commitment")).to_have_text(log["commitment"])
    expect(page.locator("#replay-seed")).to_have_text(log["seed"])
    names = page.locator("#racks .rack-who b").all_inner_texts()
    assert names == ["Ann", "Bot Kit"]

    # move by move with the keys: the racks, the piles and who decided, as the log says
    page.locator("body").focus()
    for moves in range(1, 7):
        page.keyboard.press("ArrowRight")
        assert step(page) == moves
        match = replayed(log, moves)
        assert racks(page) == [list(rack) for rack in match.racks]
        expect(page.locator("#stock-count")).to_contain_text(str(len(match.stock)))
        expect(page.locator("#discard-list .chip")).to_have_count(len(match.discard))
        move = log["moves"][moves - 1]
        mover = ["Ann", "Bot Kit"][move["seat"]]
        expect(page.locator("#step-text")).to_contain_text(mover)
        who = {"human": "human", "bot": "computer", "cover": "covering computer"}[move["by"]]
        expect(page.locator("#step-text .badge")).to_have_text(who)
    assert {m["by"] for m in log["moves"][:4]} >= {"human"}
    assert_accessible(page, "replay, a move")

    # on to the end by keys: the log's final scores, every round's points, the winner
    for _ in range(end - step(page)):
        page.keyboard.press("ArrowRight")
    assert step(page) == end
    expect(page.locator("#btn-next")).to_be_disabled()
    assert totals(page) == log["result"]["scores"]
    rounds = page.locator("#scores .round-table tr:not(.totals) th[scope=row]")
    expect(rounds).to_have_count(len(log["result"]["rounds"]))
    expect(page.locator("#round-end")).to_contain_text("wins the match")
    assert_accessible(page, "replay, the end")
    page.keyboard.press("ArrowRight")  # stays at the end
    assert step(page) == end

    # back to the start, then to the end with the slider
    page.keyboard.press("Home")
    assert step(page) == 0 and totals(page) == [0, 0]
    slider.fill(str(end))
    assert step(page) == end
    assert totals(page) == log["result"]["scores"]
    page.keyboard.press("ArrowLeft")
    slider.fill(str(end // 2))
    assert step(page) == end // 2

    # play and pause
    page.keyboard.press("Home")
    page.locator("#speed").select_option("200")
    page.locator("#btn-play").click()
    expect(page.locator("#btn-play")).to_have_attribute("aria-pressed", "true")
    page.wait_for_function("Number(document.getElementById('viewer').dataset.step) >= 3")
    page.locator("#btn-play").click()
    expect(page.locator("#btn-play")).to_have_attribute("aria-pressed", "false")
    assert page.errors == []  # type: ignore[attr-defined]


def drop_file(page: Page, name: str, text: str) -> None:
    """Drop a file on the page, as a person dragging it from their files does."""
    page.evaluate(
        """([name, text]) => {
            const data = new DataTransfer();
            data.items.add(new File([text], name, { type: "application/json" }));
            for (const type of ["dragover", "drop"]) {
              document.body.dispatchEvent(
                new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true }));
            }
        }""",
        [name, text],
    )


def test_a_downloaded_log_opens_by_drop_or_picker_and_a_tampered_one_is_refused(
    page: Page, server_url: str, finished: tuple[str, dict[str, Any]], tmp_path: Path
) -> None:
    _, log = finished
    page.goto(f"{server_url}/replay/")
    expect(page.locator("#replay-status")).to_have_text("Open a downloaded match log to replay it.")
    expect(page.locator("#viewer")).to_be_hidden()
    assert_accessible(page, "replay, open a file")

    # `by` is not checked (verifiers ignore it): a covered move shows as the computer covering
    covered = json.loads(json.dumps(log))
    first_human = next(i for i, m in enumerate(covered["moves"]) if m["by"] == "human")
    covered["moves"][first_human]["by"] = "cover"
    drop_file(page, "rackem-K7MX2Q.json", json.dumps(covered))
    expect(page.locator("#replay-status")).to_contain_text("✓ Verified")
    expect(page.locator("#replay-source")).to_contain_text("rackem-K7MX2Q.json")
    expect(page.locator("#racks .rack-who b")).to_have_text(["Seat 1", "Seat 2"])
    expect(page.locator("#racks .badge", has_text="covering computer")).to_have_count(1)
    page.locator("body").focus()
    page.keyboard.press("End")
    assert totals(page) == log["result"]["scores"]

    # a table that ended before anyone won (abandoned): replayed, and said so at its end
    ended = {**json.loads(json.dumps(log)), "moves": log["moves"][:10]}
    del ended["result"]
    drop_file(page, "ended.json", json.dumps(ended))
    expect(page.locator("#replay-status")).to_contain_text("all 10 moves are legal")
    page.keyboard.press("End")
    expect(page.locator("#round-end")).to_have_text(
        "The table ended here, before anyone won the match."
    )

    # a tampered move: refused, with the move named, and nothing replayed
    tampered = json.loads(json.dumps(log))
    index = next(i for i, m in enumerate(tampered["moves"]) if m["act"] == "draw")
    tampered["moves"][index]["seat"] = 1 - tampered["moves"][index]["seat"]
    assert not verify(tampered)["valid"]
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(tampered))
    page.locator("#file-input").set_input_files(path)
    error = page.locator("#replay-error")
    expect(error).to_contain_text("does not verify")
    expect(error).to_contain_text(f"move {index + 1} is wrong")
    expect(page.locator("#viewer")).to_be_hidden()
    assert_accessible(page, "replay, a log refused")

    # a claimed score that the moves do not give
    cheated = json.loads(json.dumps(log))
    cheated["result"]["scores"][0] += 5
    drop_file(page, "cheated.json", json.dumps(cheated))
    expect(error).to_contain_text("claimed scores")
    expect(page.locator("#viewer")).to_be_hidden()

    # what is not a log at all
    drop_file(page, "notes.json", "this is not JSON")
    expect(error).to_contain_text("not JSON")
    drop_file(page, "other.json", json.dumps({"format": "something/2"}))
    expect(error).to_contain_text("not a rackem-match/1 log")

    # the picker with a good file: the keys step at once, Space plays and pauses
    good = tmp_path / "good.json"
    good.write_text(json.dumps(log))
    page.locator("#file-input").set_input_files(good)
    expect(page.locator("#replay-status")).to_contain_text("✓ Verified")
    expect(error).to_be_hidden()
    page.keyboard.press("ArrowRight")
    assert step(page) == 1
    page.keyboard.press(" ")
    expect(page.locator("#btn-play")).to_have_attribute("aria-pressed", "true")
    page.keyboard.press(" ")
    expect(page.locator("#btn-play")).to_have_attribute("aria-pressed", "false")
    assert page.errors == []  # type: ignore[attr-defined]


def test_an_unknown_or_running_table_gets_the_not_found_message(
    page: Page, server_url: str, loop: Loop
) -> None:
    client, running = loop.run(start_match(server_url, turns=1))
    try:
        assert fetch_log(server_url, running)[0] == 404
        for table_id in ("tnosuchtable000", running):
            page.goto(f"{server_url}/replay/{table_id}")
            error = page.locator("#replay-error")
            expect(error).to_contain_text(f"No finished match has the id “{table_id}”")
            expect(page.locator("#viewer")).to_be_hidden()
            expect(page.locator("h1")).to_have_text("Match replay")
            expect(page.locator("#file-input")).to_be_visible()  # a file can still be opened
        assert_accessible(page, "replay, not found")
    finally:
        loop.run(client.close())
    assert page.errors == []  # type: ignore[attr-defined]


def test_the_replay_fits_a_phone(
    new_context: Any, server_url: str, finished: tuple[str, dict[str, Any]]
) -> None:
    table_id, log = finished
    phone = new_context(**PHONE).new_page()
    open_replay(phone, f"{server_url}/replay/{table_id}")
    for _ in range(3):
        phone.locator("#btn-next").tap()
    assert step(phone) == 3
    phone.locator("#btn-last").tap()
    assert totals(phone) == log["result"]["scores"]
    assert_accessible(phone, "replay on a phone")
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["viewport"]["width"]
    for button in phone.locator(".control-row .btn").all():
        box = button.bounding_box()
        assert box is not None and box["width"] >= 44 and box["height"] >= 44
