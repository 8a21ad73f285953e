"""axe-core in the page: every screen is checked for accessibility problems.

The engine is the ``axe.min.js`` that the ``axe-playwright-python`` package ships (a
dev dependency in pyproject.toml, installed by scripts/setup): nothing is fetched at
test time and no npm folder is needed.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from typing import Any

from playwright.sync_api import Page

BLOCKING = ("serious", "critical")
# Every rule, the experimental ones too (label-content-name-mismatch is one).
_RUN = """
(() => {
  const rules = Object.fromEntries(
    axe.getRules(['experimental']).map(r => [r.ruleId, {enabled: true}]));
  return axe.run(document, {resultTypes: ['violations'], rules}).then(r => r.violations);
})()
"""


@cache
def _engine() -> str:
    return (files("axe_playwright_python") / "axe.min.js").read_text(encoding="utf-8")


def violations(page: Page, impacts: tuple[str, ...] = BLOCKING) -> list[str]:
    """axe-core's violations of ``impacts`` on the page as it is now, one line each."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(_engine())
    found: list[dict[str, Any]] = page.evaluate(_RUN)
    return [
        f"{v['impact']} {v['id']}: {v['help']} at "
        + "; ".join(" ".join(map(str, node["target"])) for node in v["nodes"][:4])
        for v in found
        if v.get("impact") in impacts
    ]


def assert_accessible(page: Page, screen: str) -> None:
    """No serious or critical axe-core violation on ``screen`` (named in the message)."""
    problems = violations(page)
    assert not problems, f"{screen}: " + "\n".join(problems)
