"""The page installs as an app: a manifest with icons, and a service worker that keeps the shell."""

from __future__ import annotations

import json
import struct
import urllib.request
from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, expect

from .conftest import watch

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


def test_the_service_worker_keeps_the_shell_for_offline_use(
    new_context: Callable[..., BrowserContext], server_url: str
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
    assert not any(path.startswith(("/ws", "/match/")) for path in cached)

    context.set_offline(True)
    page.reload()
    # the shell still opens from the cache, on its home screen: play needs the connection
    expect(page.locator("#screen-home")).to_be_visible()
    expect(page.locator("#offline-note")).to_be_visible()
    expect(page.locator("#offline-note")).to_contain_text("Playing needs a connection")
    context.set_offline(False)
    # it kept retrying by itself: once back, the note goes
    expect(page.locator("#offline-note")).to_be_hidden(timeout=30_000)
    expect(page.locator("#screen-home")).to_be_visible()
    assert page.errors == []  # type: ignore[attr-defined]
