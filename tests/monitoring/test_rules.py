"""The Prometheus rules: promtool accepts them and their unit tests pass, every alert
carries what an on-call needs (severity, summary, description, a runbook section that
exists), and Kubernetes' PrometheusRule carries exactly the plain file's groups."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "monitoring" / "prometheus" / "rules" / "rackem.rules.yml"
PROMTOOL_TESTS = sorted((ROOT / "monitoring" / "prometheus" / "tests").glob("*.yml"))
PROMETHEUS_RULE = ROOT / "k8s" / "components" / "monitoring" / "prometheus-rules.yaml"
RUNBOOK = ROOT / "docs" / "operations.md"
RUNBOOK_URL = "https://github.com/rackem/rackem/blob/main/docs/operations.md#"
SEVERITIES = {"page", "ticket"}


def promtool(*args: str) -> None:
    binary = shutil.which("promtool")
    if binary is None:
        pytest.fail("promtool is not installed (scripts/setup installs Debian's prometheus)")
    result = subprocess.run([binary, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
    print(result.stdout, result.stderr)
    assert result.returncode == 0, (
        f"promtool {' '.join(args)} failed:\n{result.stdout}{result.stderr}"
    )


def groups() -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = yaml.safe_load(RULES.read_text())["groups"]
    return loaded


def alerts() -> Iterator[dict[str, Any]]:
    for group in groups():
        for rule in group["rules"]:
            if "alert" in rule:
                yield rule


def github_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped (but
    ``-`` and ``_``), spaces as ``-``, a repeated one numbered."""
    seen: dict[str, int] = {}
    anchors = set()
    in_code = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        match = re.match(r"#{1,6} +(.+?) *#* *$", line)
        if in_code or match is None:
            continue
        text = re.sub(r"`|\*\*|\[([^]]*)\]\([^)]*\)", r"\1", match.group(1)).strip().lower()
        anchor = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        anchors.add(anchor if count == 0 else f"{anchor}-{count}")
    return anchors


def test_promtool_checks_the_rules() -> None:
    promtool("check", "rules", str(RULES.relative_to(ROOT)))


def test_promtool_unit_tests_pass() -> None:
    assert PROMTOOL_TESTS
    promtool("test", "rules", *(str(path.relative_to(ROOT)) for path in PROMTOOL_TESTS))


def test_every_alert_has_a_severity_a_summary_a_description_and_a_runbook() -> None:
    anchors = github_anchors(RUNBOOK.read_text())
    missing = []
    for rule in alerts():
        name = rule["alert"]
        assert rule.get("labels", {}).get("severity") in SEVERITIES, name
        annotations = rule.get("annotations", {})
        assert annotations.get("summary"), name
        assert annotations.get("description"), name
        url = annotations.get("runbook_url", "")
        assert url.startswith(RUNBOOK_URL), f"{name}: {url!r}"
        if url.removeprefix(RUNBOOK_URL) not in anchors:
            missing.append(f"{name}: {url}")
    assert not missing, f"runbook anchors missing from docs/operations.md: {missing}"


def test_each_alert_has_its_own_runbook_section() -> None:
    for rule in alerts():
        assert rule["annotations"]["runbook_url"] == RUNBOOK_URL + rule["alert"].lower()


def test_every_alert_has_promtool_cases_where_it_fires_and_where_it_must_not() -> None:
    fires: set[str] = set()
    quiet: set[str] = set()
    for path in PROMTOOL_TESTS:
        for case in yaml.safe_load(path.read_text())["tests"]:
            for check in case.get("alert_rule_test", []):
                (fires if check.get("exp_alerts") else quiet).add(check["alertname"])
    names = {rule["alert"] for rule in alerts()}
    assert names - fires == set(), "alerts no promtool test sees firing"
    assert names - quiet == set(), "alerts no promtool test sees quiet"


def test_the_prometheus_rule_carries_the_same_groups() -> None:
    (rule,) = [doc for doc in yaml.safe_load_all(PROMETHEUS_RULE.read_text()) if doc]
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["kind"] == "PrometheusRule"
    assert rule["spec"] == {"groups": groups()}


def test_the_prometheus_rule_is_generated_from_the_rules_file() -> None:
    result = subprocess.run(
        [str(ROOT / "scripts" / "prometheus-rule.py"), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


def test_github_anchors_are_made_as_github_makes_them() -> None:
    page = (
        "# Operations\n## RackemServiceDown\n### A rolling deploy: tables move\n"
        "```sh\n# not a heading\n```\n## `LEASE_INDEX_SHARDS`\n## Operations\n"
    )
    assert github_anchors(page) == {
        "operations",
        "rackemservicedown",
        "a-rolling-deploy-tables-move",
        "lease_index_shards",
        "operations-1",
    }
