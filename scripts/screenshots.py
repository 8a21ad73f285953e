#!/usr/bin/env python3
"""Take the web client's screenshots for docs/screenshots/ (and the README).

Starts ``rackem up`` on a free port (or uses ``--url``), plays real games in
Chromium through the page's own controls, and saves: the home screen, the waiting
room, the table mid-round, a round over and a match over (desktop, landscape), and
the table on a tablet held sideways (1024x768), and the home screen, the invitation a
share link opens and the table on a phone (portrait), as JPEGs.

    python3 scripts/screenshots.py [--url http://127.0.0.1:8000] [--out docs/screenshots]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page, expect, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from web.conftest import CHROMIUM, CHROMIUM_ARGS, DESKTOP, PHONE  # noqa: E402
from web.player import MATCH_OVER, MY_DECISION, Player  # noqa: E402

JPEG_QUALITY = 90  # JPEGs: the felt's gradients make PNGs several times larger

# Hints off and the player's name remembered: clean screens.
PREFS = {"name": "Ann", "hints": False, "gamesFinished": 1}
ROUND_OVER = "!document.getElementById('round-over').hidden"
TABLET = {"width": 1024, "height": 768}
PHONE_2X = {**PHONE, "device_scale_factor": 2}


@contextlib.contextmanager
def rackem_up() -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "BOT_DELAY_MS": "150", "GAMES_PER_IP": "0", "LOG_LEVEL": "WARNING"}
    cmd = [sys.executable, "-m", "rackem.cli", "up", "--port", str(port), "--no-browser"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                with urllib.request.urlopen(f"{url}/readyz", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def new_page(browser: Browser, url: str, **options: Any) -> Page:
    context = browser.new_context(service_workers="block", **options)
    context.set_default_timeout(30_000)
    page = context.new_page()
    page.goto(url)
    page.evaluate(f"localStorage.setItem('rackem.prefs', {json.dumps(json.dumps(PREFS))})")
    page.reload()
    return page


def play_decisions(me: Player, count: int) -> None:
    for _ in range(count):
        me.page.wait_for_function(MY_DECISION)
        tv = me.tv()
        action, slot = me.choose(tv)
        me._act(action, slot, "click")
        me.wait_version_after(tv["version"])


def desktop(browser: Browser, url: str, out: Path) -> None:
    page = new_page(browser, url, viewport=DESKTOP)
    me = Player(page, url)
    expect(page.locator("#screen-home")).to_be_visible()
    page.locator("#rules-options summary").click()
    page.screenshot(path=out / "home-desktop.jpg", type="jpeg", quality=JPEG_QUALITY)

    # the waiting room of a private table, open to spectators
    page.locator("#rules-options summary").click()
    page.locator('#form-new input[name="players"][value="3"]').check(force=True)
    page.locator("#opt-spectators").check()
    page.click("#btn-create")
    expect(page.locator("#screen-lobby")).to_be_visible()
    page.screenshot(path=out / "lobby-desktop.jpg", type="jpeg", quality=JPEG_QUALITY)
    # the invitation its share link opens, on a phone: who is waiting, your name, Join
    guest = new_page(browser, page.locator("#lobby-link").input_value(), **PHONE_2X)
    expect(guest.locator("#screen-invite")).to_be_visible()
    expect(guest.locator("#invite-seats li")).to_have_count(3)
    guest.screenshot(path=out / "invite-phone.jpg", type="jpeg", quality=JPEG_QUALITY)
    guest.context.close()
    page.click("#btn-lobby-leave")
    expect(page.locator("#screen-home")).to_be_visible()

    # four players, visible centres: the table mid-round, holding a card
    me.set_rules({"visible_center": True, "target": 150, "run_to_go_out": 0}, players=4)
    page.click("#btn-new-game")
    expect(page.locator("#screen-table")).to_be_visible()
    play_decisions(me, 13)
    me.wait_my_decision("resolve")
    page.locator("#btn-history").click()
    page.mouse.move(0, 0)
    page.screenshot(path=out / "table-desktop.jpg", type="jpeg", quality=JPEG_QUALITY)
    page.locator("#btn-history").click()
    page.set_viewport_size(TABLET)
    page.screenshot(path=out / "table-tablet.jpg", type="jpeg", quality=JPEG_QUALITY)
    page.set_viewport_size(DESKTOP)

    me.play_until(f"{ROUND_OVER} || {MATCH_OVER}")
    if page.evaluate(ROUND_OVER):
        page.screenshot(path=out / "round-over-desktop.jpg", type="jpeg", quality=JPEG_QUALITY)
    me.play_until(MATCH_OVER)
    page.locator("#btn-verify").click()
    expect(page.locator("#verify-result")).to_contain_text("Verified")
    page.screenshot(path=out / "match-over-desktop.jpg", type="jpeg", quality=JPEG_QUALITY)
    page.context.close()


def phone(browser: Browser, url: str, out: Path) -> None:
    page = new_page(browser, url, **PHONE_2X)
    me = Player(page, url)
    expect(page.locator("#screen-home")).to_be_visible()
    page.screenshot(path=out / "home-phone.jpg", type="jpeg", quality=JPEG_QUALITY)
    me.set_rules({"target": 100, "run_to_go_out": 0}, players=3)
    page.click("#btn-new-game")
    expect(page.locator("#screen-table")).to_be_visible()
    play_decisions(me, 9)
    me.wait_my_decision("resolve")
    page.screenshot(path=out / "table-phone.jpg", type="jpeg", quality=JPEG_QUALITY)
    page.context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running rackem (default: start rackem up)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    server = contextlib.nullcontext(args.url) if args.url else rackem_up()
    with server as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            desktop(browser, url, args.out)
            phone(browser, url, args.out)
        finally:
            browser.close()
    for path in sorted(args.out.glob("*.jpg")):
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


if __name__ == "__main__":
    main()
