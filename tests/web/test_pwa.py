"""The page installs as an app: a manifest with icons, and a service worker that keeps the shell."""

from __future__ import annotations

import json
import random
import re
import struct
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, expect

from rackcore import Match, Rules, observe, to_log
from rackcore.bots import choose

from .conftest import STATIC, watch

pytestmark = pytest.mark.browser


def fetch(url: str) -> tuple[str, bytes]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.headers.get("content-type", ""), response.read()


def test_the_manifest_names_icons_that_exist(server_url: str) -> None:
    kind, body = fetch(f"{server_url}/manifest.webmanifest")
    manifest = json.loads(body)
    assert manifest["start_url"] == "/" and manifest["display"] == "standalone"
    purposes = set()
    for icon in manifest["icons"]:
        kind, data = fetch(server_url + icon["src"])
        if icon["type"] == "image/png":
            assert data[:8] == b"\x89PNG\r\n\x1a\n"
            width, height = struct.unpack(">II", data[16:24])
            assert f"{width}x{height}" == icon["sizes"]
        else:
            assert kind.startswith("image/svg+xml") and b"<svg" in data
        purposes.add(icon.get("purpose", "any"))
    assert {"any", "maskable"} <= purposes


def shell() -> set[str]:
    """The paths sw.js lists in its shell."""
    listed = re.search(r"const SHELL = \[(.*?)\];", (STATIC / "sw.js").read_text(), re.S)
    assert listed
    return set(re.findall(r'"([^"]+)"', listed.group(1)))


def test_the_shell_holds_every_file_both_pages_load() -> None:
    pages = [*STATIC.glob("js/*.js"), *STATIC.glob("css/*.css")]
    files = {f"/{p.relative_to(STATIC)}" for p in pages}
    assert {"/js/app.js", "/js/replay.js", "/css/replay.css"} <= files
    assert files <= shell()
    assert {"/", "/replay/", "/icons/icon.svg"} <= shell()


def match_log_file(folder: Path) -> Path:
    """A finished match's log, as the match-over screen's Download saves it."""
    rng = random.Random(16)
    match = Match(Rules(players=2, target=50, turn_cap=50), seed=rng.randbytes(32))
    while match.outcome() is None:
        if match.phase == "round_over":
            move = match.legal_moves()[0]
        else:
            move = choose(observe(match, match.turn), level="easy", seed=rng.randrange(1000))
        match.apply(move)
    log = to_log(match)
    for move in log["moves"]:
        move["by"] = "bot"
    path = folder / "rackem-match.json"
    path.write_text(json.dumps(log))
    return path


def test_the_service_worker_keeps_the_shell_for_offline_use(
    new_context: Callable[..., BrowserContext], server_url: str, tmp_path: Path
) -> None:
    context = new_context(service_workers="allow")
    page = watch(context.new_page())
    page.goto(server_url)
    expect(page.locator("#screen-home")).to_be_visible()
    page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    cached = page.evaluate(
        "caches.keys().then(keys => caches.open(keys[0]))"
        ".then(c => c.keys()).then(rs => rs.map(r => new URL(r.url).pathname))"
    )
    assert {"/", "/js/app.js", "/css/app.css", "/js/verify.js"} <= set(cached)
    assert {"/replay/", "/js/replay.js", "/js/replay-model.js", "/css/replay.css"} <= set(cached)
    assert not any(path.startswith(("/ws", "/match/")) for path in cached)

    context.set_offline(True)
    page.reload()
    # the shell still opens from the cache, on its home screen: play needs the connection
    expect(page.locator("#screen-home")).to_be_visible()
    expect(page.locator("#offline-note")).to_be_visible()
    expect(page.locator("#offline-note")).to_contain_text("Playing needs a connection")
    # the replay viewer opens offline too, and replays a downloaded log
    viewer = watch(context.new_page())
    viewer.goto(f"{server_url}/replay/")
    expect(viewer.locator("#replay-status")).to_contain_text("Open a downloaded match log")
    viewer.locator("#file-input").set_input_files(match_log_file(tmp_path))
    expect(viewer.locator("#replay-status")).to_contain_text("✓ Verified")
    expect(viewer.locator("#viewer")).to_be_visible()
    # a finished match's link is the same page, which says the log needs the connection
    viewer.goto(f"{server_url}/replay/t0123456789abcdef")
    expect(viewer.locator("#replay-error")).to_contain_text("Could not reach the server")
    assert viewer.errors == []  # type: ignore[attr-defined]
    viewer.close()
    context.set_offline(False)
    # it kept retrying by itself: once back, the note goes
    expect(page.locator("#offline-note")).to_be_hidden(timeout=30_000)
    expect(page.locator("#screen-home")).to_be_visible()
    assert page.errors == []  # type: ignore[attr-defined]
