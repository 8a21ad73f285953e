"""The Leaderboard screen, and a profile with an established rating on the You screen.

Ratings take many rated matches to settle, so they are prepared in the archive itself:
two profiles are made in the SQLite file of the server's ``--data`` directory (the
profile store of services/archive, as the gateway and the table service use it) and
play rated matches there, one winning every time, until neither is provisional. The
page then shows the leaderboard of the public ones, on a desktop and on a phone, and
the winner's You screen with its rating, its course as a chart and its rated history.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import BrowserContext, expect

from services.archive.profiles import MatchResult, SeatResult
from services.archive.settings import ArchiveSettings
from services.archive.tier import open_profiles
from services.profiles.keys import hash_key, new_key

from .axe import assert_accessible
from .conftest import PHONE, watch
from .test_profile import STATE, ProfileServer, sideways, start_profile_server

pytestmark = pytest.mark.browser

MATCHES = 16  # rated matches: enough for both profiles' ratings to settle (Ada wins the last)


@pytest.fixture(scope="module")
def profile_server() -> Iterator[ProfileServer]:
    yield from start_profile_server()


def seat(n: int, name: str, profile: str, score: int, place: int) -> SeatResult:
    won = place == 1
    return SeatResult(
        seat=n,
        name=name,
        profile=profile,
        bot=False,
        left=False,
        score=score,
        place=place,
        won=won,
        rounds_won=3 if won else 1,
        own_turns_to_go_out=(14, 12, 11) if won else (20,),
        best_bonus_run=0,
    )


async def prepare(data: str) -> dict[str, str]:
    """Two public profiles and a private one; Ada beats Bo in two rated matches of three
    (a one-sided record settles a rating more slowly). Their keys."""
    store = await open_profiles(ArchiveSettings(database_url=f"sqlite:///{data}/archive.sqlite3"))
    try:
        now = int(time.time() * 1000)
        keys = {name: new_key() for name in ("Ada", "Bo", "Cy")}
        made = {
            name: await store.create_profile(name, hash_key(key), now) for name, key in keys.items()
        }
        for name in ("Ada", "Bo"):
            await store.update_profile(made[name].id, public=True)
        ada, bo = made["Ada"].id, made["Bo"].id
        for n in range(MATCHES):
            result = MatchResult(
                table_id=f"tprep{n:012x}",
                finished_at_ms=now - (MATCHES - n) * 60_000,
                players=2,
                rated=True,
                daily="",
                seats=(
                    (seat(0, "Ada", ada, 500, 1), seat(1, "Bo", bo, 240, 2))
                    if n % 3 != 2
                    else (seat(0, "Ada", ada, 240, 2), seat(1, "Bo", bo, 500, 1))
                ),
            )
            assert await store.apply_result(result)
        return keys
    finally:
        await store.close()


def test_the_leaderboard_lists_public_established_ratings_best_first(
    new_context: Callable[..., BrowserContext], profile_server: ProfileServer
) -> None:
    # in a thread of its own: Playwright's sync API holds this thread's event loop
    with ThreadPoolExecutor(1) as pool:
        keys = pool.submit(asyncio.run, prepare(str(profile_server.data))).result()
    base = profile_server.url

    page = watch(new_context().new_page())
    page.goto(base)
    page.locator("#btn-leaderboard").click()
    expect(page.locator("#screen-leaderboard")).to_be_visible()
    expect(page.locator("#leaderboard-title")).to_be_focused()
    rows = page.locator("#leaderboard-rows tr")
    expect(rows).to_have_count(2)  # Cy keeps off it
    expect(rows.nth(0).locator("td")).to_have_text(["1", "Ada", re.compile(r"^\d{4}$")])
    expect(rows.nth(1).locator("td")).to_have_text(["2", "Bo", re.compile(r"^\d{4}$")])
    best = int(rows.nth(0).locator("td").nth(2).inner_text())
    assert best > 1500 > int(rows.nth(1).locator("td").nth(2).inner_text())
    assert_accessible(page, "the leaderboard")
    # Back returns home; Forward the leaderboard again
    page.go_back()
    expect(page.locator("#screen-home")).to_be_visible()
    page.go_forward()
    expect(page.locator("#screen-leaderboard")).to_be_visible()

    # the same on a phone, opened at its address
    phone = watch(new_context(**PHONE).new_page())
    phone.goto(base + "/#leaderboard")
    expect(phone.locator("#leaderboard-rows tr")).to_have_count(2)
    problems = sideways(phone, "#screen-leaderboard")
    assert problems == [], "\n".join(problems)
    assert_accessible(phone, "the leaderboard on a phone")

    # Ada's own device: her established rating, its course, her rated matches
    ada = new_context()
    ada.add_init_script(f"localStorage.setItem('rackem.profile', '{keys['Ada']}')")
    you = watch(ada.new_page())
    you.goto(base + "/#you")
    you.wait_for_function(f"{STATE}.status === 'bound' && {STATE}.history !== null")
    expect(you.locator("#you-rating")).to_have_text(f"Rating {best}")
    expect(you.locator("#you-provisional")).to_be_hidden()
    expect(you.locator("#you-public")).to_be_checked()
    expect(you.locator("#you-history li")).to_have_count(MATCHES)
    first = you.locator("#you-history li").first
    expect(first).to_contain_text(re.compile(rf"rating \d{{4}} → {best} \(\+\d+\)"))
    expect(first).to_contain_text("1st of 2")  # match 15: n % 3 == 0
    chart = you.locator("#you-chart svg[role=img]")
    expect(chart).to_have_attribute("aria-label", re.compile(rf"from 1500 to {best}"))
    points = chart.locator("polyline").get_attribute("points") or ""
    assert len(points.split()) == MATCHES + 1
    stats = you.locator("#you-stats tbody tr")
    expect(stats.nth(0)).to_have_text(re.compile(rf"Matches played\s*{MATCHES}\s*{MATCHES}"))
    won = sum(1 for n in range(MATCHES) if n % 3 != 2)
    expect(stats.nth(1)).to_have_text(re.compile(rf"Matches won\s*{won}\s*{won}"))
    assert_accessible(you, "You, with an established rating")
    you.set_viewport_size({"width": 360, "height": 640})
    you.wait_for_function("innerWidth === 360")
    problems = sideways(you, "#screen-you")
    assert problems == [], "\n".join(problems)
    for p in (page, phone, you):
        assert p.errors == []  # type: ignore[attr-defined]
