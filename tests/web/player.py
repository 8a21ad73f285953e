"""A person at the web client, driven through the page: clicks, taps or keys.

Decisions come from a simple strategy that reads the page's last `view` (what the
server sent this seat); every action goes through the page's own controls.
"""

from __future__ import annotations

import json
import re
from typing import Any

from playwright.sync_api import Page, expect

FAST_RULES = {"target": 50, "run_to_go_out": 0, "turn_cap": 60}

STATE = "window.rackem?.state"
MY_DECISION = (
    f"({STATE}.tv && {STATE}.tv.legal.length > 0 && !{STATE}.pending"
    f" && {STATE}.tv.status === 'playing')"
)
CAN_CONTINUE = (
    "(!document.getElementById('round-over').hidden"
    " && !document.getElementById('btn-continue').disabled)"
)
MATCH_OVER = "!document.getElementById('match-over').hidden"


class Player:
    def __init__(self, page: Page, base_url: str) -> None:
        self.page = page
        self.base = base_url

    # -- reading -----------------------------------------------------------------------

    def tv(self) -> dict[str, Any]:
        """The last `view` message the page received (as the server sent it)."""
        data: dict[str, Any] = self.page.evaluate(f"{STATE}.tv")
        return data

    def rack(self) -> list[int]:
        """The rack as drawn on the page, slot 5 first."""
        texts = self.page.locator("#my-rack .slot .num").all_inner_texts()
        return [int(t) for t in texts]

    def wait_my_decision(self, phase: str | None = None, timeout: float = 30_000) -> dict[str, Any]:
        """Wait until this seat may move (the page has legal moves and none is pending)."""
        cond = MY_DECISION
        if phase:
            cond += f" && {STATE}.tv.view.phase === {json.dumps(phase)}"
        self.page.wait_for_function(cond, timeout=timeout)
        return self.tv()

    def wait_version_after(self, version: int) -> None:
        self.page.wait_for_function(
            f"{STATE}.tv && {STATE}.tv.version > {version} && !{STATE}.pending"
        )

    # -- starting ------------------------------------------------------------------------

    def open_home(self, path: str = "/") -> None:
        self.page.goto(self.base + path)
        expect(self.page.locator("#screen-home")).to_be_visible()

    def set_rules(self, rules: dict[str, Any], players: int = 2, level: str = "easy") -> None:
        page = self.page
        page.locator(f'#form-new input[name="players"][value="{players}"]').check(force=True)
        page.locator(f'#form-new input[name="level"][value="{level}"]').check(force=True)
        page.locator("#rules-options summary").click()
        for key, value in rules.items():
            field = page.locator(f'#form-new [name="{key}"]')
            if isinstance(value, bool):
                field.set_checked(value)
            elif field.evaluate("e => e.tagName") == "SELECT":
                field.select_option(str(value))
            else:
                field.fill(str(value))

    def new_game(self, name: str, rules: dict[str, Any], players: int = 2) -> None:
        self.open_home()
        self.page.fill("#name", name)
        self.set_rules(rules, players)
        self.page.click("#btn-new-game")
        expect(self.page.locator("#screen-table")).to_be_visible()

    # -- playing -------------------------------------------------------------------------

    @staticmethod
    def choose(tv: dict[str, Any]) -> tuple[str, int | None]:
        """A sound, quick strategy: keep each card in the tenth of the deck its slot stands for."""
        v = tv["view"]
        size = 10 * int(v["rules"]["players"]) + 20
        rack = v["rack"]

        def bucket(card: int) -> int:
            b = (int(card) - 1) * 10 // size
            return 9 - b if v["rules"]["descending"] else b

        def settled(slot: int) -> bool:
            return bucket(rack[slot]) == slot

        legal = tv["legal"]
        if v["phase"] == "draw":
            top = v["discard"][-1] if v["discard"] else None
            can_discard = any(m.get("from") == "discard" for m in legal)
            if can_discard and top is not None and not settled(bucket(top)):
                return ("discard", None)
            return ("stock", None)
        held = v["held"]
        slot = bucket(held)
        if settled(slot) and any(m["act"] == "throw" for m in legal):
            return ("throw", None)
        return ("slot", slot)

    def play_turn(self, by: str = "click") -> dict[str, Any]:
        """Play one whole turn (draw, then place or throw) through the page's controls."""
        before = self.wait_my_decision("draw")
        source, _ = self.choose(before)
        self._act(source, None, by)
        self.wait_version_after(before["version"])
        during = self.wait_my_decision("resolve")
        action, slot = self.choose(during)
        self._act(action, slot, by)
        self.wait_version_after(during["version"])
        return during

    def _act(self, action: str, slot: int | None, by: str) -> None:
        page = self.page
        if by == "key":
            key = {"stock": "s", "discard": "d", "throw": "t"}.get(action)
            page.keyboard.press(key if key else str((slot or 0) + 1)[-1])
            return
        target = {"stock": "#stock", "discard": "#discard", "throw": "#btn-throw"}.get(action)
        locator = (
            page.locator(target) if target else page.locator(f'#my-rack .slot[data-slot="{slot}"]')
        )
        if by == "tap":
            locator.tap()
        else:
            locator.click()

    def play_until(self, condition: str, by: str = "click", max_decisions: int = 400) -> int:
        """Play (and continue after rounds) until `condition`, a JS expression, holds.

        Returns how many decisions this seat made.
        """
        decisions = 0
        probe = f"({{done: Boolean({condition}), more: Boolean({CAN_CONTINUE}), tv: {STATE}.tv}})"
        for _ in range(max_decisions):
            self.page.wait_for_function(
                f"({condition}) || {CAN_CONTINUE} || {MY_DECISION}", timeout=60_000
            )
            now = self.page.evaluate(probe)
            if now["done"]:
                return decisions
            if now["more"]:
                if by == "key":
                    self.page.keyboard.press("Enter")
                else:
                    self.page.locator("#btn-continue").click()
                self.page.wait_for_function(f"!({CAN_CONTINUE})")
                continue
            tv = now["tv"]
            action, slot = self.choose(tv)
            self._act(action, slot, by)
            decisions += 1
            self.wait_version_after(tv["version"])
        raise AssertionError(f"{condition} did not happen within {max_decisions} decisions")


def table_code(page: Page) -> str:
    code = page.locator("#lobby-code").inner_text().strip()
    assert re.fullmatch(r"[A-Z2-9]{6}", code), code
    return code
