"""The web client's modules: every import resolves, none goes in a circle, docs/web.md lists all.

Read from the files as the browser gets them (no browser needed): the ``import … from
"./x.js"`` statements of ``services/gateway/static/js/``.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "services" / "gateway" / "static" / "js"
IMPORT = re.compile(r'^import\b[^;]*?\bfrom\s+"\./([^"]+)"', re.M | re.S)


def imports() -> dict[str, list[str]]:
    """Each module's name, and the modules it imports (by file name)."""
    return {path.name: IMPORT.findall(path.read_text(encoding="utf-8")) for path in JS.glob("*.js")}


def test_every_import_is_a_module_of_the_folder() -> None:
    graph = imports()
    assert {"app.js", "replay.js"} <= set(graph)
    missing = {(name, dep) for name, deps in graph.items() for dep in deps if dep not in graph}
    assert missing == set()
    assert not any("app.js" in deps for deps in graph.values()), "app.js is the wiring"


def test_no_import_goes_in_a_circle() -> None:
    graph = imports()
    done: set[str] = set()
    cycles: list[list[str]] = []

    def visit(name: str, path: list[str]) -> None:
        for dep in graph[name]:
            if dep in path:
                cycles.append([*path[path.index(dep) :], dep])
            elif dep not in done:
                visit(dep, [*path, dep])
        done.add(name)

    for name in sorted(graph):
        if name not in done:
            visit(name, [name])
    assert cycles == []


def test_docs_web_md_names_every_module() -> None:
    text = (ROOT / "docs" / "web.md").read_text(encoding="utf-8")
    files = text.split("## Files", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in files.splitlines() if line.startswith("| `")]
    named = {name for row in rows for name in re.findall(r"`js/([\w-]+\.js)`", row)}
    assert named == set(imports())
