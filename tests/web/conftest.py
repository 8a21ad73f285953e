"""Browser tests of the web client: Playwright driving Debian's Chromium.

The page talks to a real system: a session fixture starts ``rackem up --port 0`` (any
free port: the URL it prints says which) with bots moving quickly, so whole matches fit
in seconds. ``RACKEM_WEB_URL`` points the tests at a server that is already running
instead.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "services" / "gateway" / "static"
DESKTOP = {"width": 1366, "height": 820}
PHONE_SIZE = {"width": 390, "height": 844}
PHONE: dict[str, Any] = {
    "viewport": PHONE_SIZE,
    "device_scale_factor": 3,
    "is_mobile": True,
    "has_touch": True,
}
WAIT_MS = 20_000
# A page's assertions wait as long as its actions (Playwright's own default is 5 s): on a
# loaded 2-core machine the first connection alone can take longer than that.
expect.set_options(timeout=WAIT_MS)


def _printed_url(proc: subprocess.Popen[bytes], output: Path) -> str:
    """The URL ``rackem up`` prints once it is up (``rackem is up: open URL``)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = re.search(r"rackem is up: open (http://\S+)", output.read_text(errors="replace"))
        if found is not None:
            return found.group(1)
        if proc.poll() is not None:
            raise RuntimeError(
                f"rackem up exited with {proc.returncode}:\n{output.read_text()[-4000:]}"
            )
        time.sleep(0.1)
    raise RuntimeError("rackem up did not print its URL")


def _wait_ready(url: str, proc: subprocess.Popen[bytes] | None, log: Path | None) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            output = log.read_text() if log else ""
            raise RuntimeError(f"rackem up exited with {proc.returncode}:\n{output[-4000:]}")
        try:
            with urllib.request.urlopen(f"{url}/readyz", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the server at {url} did not become ready")


@pytest.fixture(scope="session")
def server_url() -> Iterator[str]:
    """The base URL of a running rackem system (``rackem up`` started for the session)."""
    given = os.environ.get("RACKEM_WEB_URL")
    if given:
        _wait_ready(given.rstrip("/"), None, None)
        yield given.rstrip("/")
        return
    env = {
        **os.environ,
        "BOT_DELAY_MS": "120",  # bots move quickly: whole matches in seconds
        # a shorter clock than a person's 45 s, so test_screens.py sees a seat covered soon;
        # long enough for the tests' own players, who decide in well under a second
        "DECISION_MS": "8000",
        "GAMES_PER_IP": "0",  # every test starts games from 127.0.0.1
        "LOG_LEVEL": "WARNING",
    }
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "rackem-up.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "rackem.cli", "up", "--port", "0", "--no-browser"],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
            try:
                url = _printed_url(proc, log)
                _wait_ready(url, proc, log)
                yield url
            finally:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="session")
def static_url() -> Iterator[str]:
    """The static files alone, for unit tests of the page's modules (no game server)."""
    handler = functools.partial(_QuietHandler, directory=str(STATIC))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} is missing: install Debian's chromium (scripts/setup does)")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def new_context(browser: Browser) -> Iterator[Callable[..., BrowserContext]]:
    """Make browser contexts (separate storage, like separate people); all closed afterwards."""
    made: list[BrowserContext] = []

    def make(**options: Any) -> BrowserContext:
        options.setdefault("viewport", DESKTOP)
        options.setdefault("service_workers", "block")
        context = browser.new_context(**options)
        context.set_default_timeout(WAIT_MS)
        made.append(context)
        return context

    yield make
    for context in made:
        context.close()


@pytest.fixture
def page(new_context: Callable[..., BrowserContext]) -> Page:
    return watch(new_context().new_page())


def watch(page: Page) -> Page:
    """Collect uncaught script errors of the page in ``page.errors`` (tests assert it is empty)."""
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors  # type: ignore[attr-defined]
    return page


@pytest.fixture(scope="module")
def js(browser: Browser, static_url: str) -> Iterator[Page]:
    """A page on the static files' origin with no game in it, where the modules import
    (``page.evaluate`` with ``await import("/js/…")``); one for a test module."""
    context = browser.new_context()
    page = watch(context.new_page())
    blank = f"{static_url}/__blank__.html"
    page.route(
        blank,
        lambda route: route.fulfill(
            body="<!doctype html><title>t</title>", content_type="text/html"
        ),
    )
    page.goto(blank)
    yield page
    assert page.errors == []  # type: ignore[attr-defined]
    context.close()
