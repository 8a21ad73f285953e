"""rackcore is pure: standard library imports only, and never the global random."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import rackcore

ROOT = Path(rackcore.__file__).parent


def _sources() -> list[Path]:
    return sorted(ROOT.rglob("*.py"))


def _imports(tree: ast.AST) -> list[tuple[str, int]]:
    """Top-level module names imported by absolute imports, with line numbers."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name.split(".")[0], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module.split(".")[0], node.lineno))
    return found


def test_the_walk_covers_every_module_including_the_bots() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in _sources()}
    assert {"__init__.py", "_state.py", "_view.py", "_log.py"} <= names
    if (ROOT / "bots").is_dir():
        assert any(n.startswith("bots/") for n in names)


def test_rackcore_imports_only_the_standard_library() -> None:
    allowed = set(sys.stdlib_module_names) | {"rackcore", "__future__"}
    offending = []
    for path in _sources():
        for module, line in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if module not in allowed:
                offending.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert offending == []


def test_the_import_check_catches_a_third_party_import() -> None:
    tree = ast.parse("import os\nfrom grpc import aio\nimport redis.asyncio\nfrom . import _x\n")
    allowed = set(sys.stdlib_module_names)
    assert [m for m, _ in _imports(tree) if m not in allowed] == ["grpc", "redis"]


def test_rackcore_never_uses_the_global_random() -> None:
    """``random.Random(seed)`` instances are fine; the module-level functions are not."""
    offending = []
    for path in _sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "random":
                names = [a.name for a in node.names if a.name not in ("Random", "SystemRandom")]
                if names:
                    offending.append(f"{path.relative_to(ROOT)}:{node.lineno} from random {names}")
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "random"
                and node.attr not in ("Random", "SystemRandom")
            ):
                offending.append(f"{path.relative_to(ROOT)}:{node.lineno} random.{node.attr}")
    assert offending == []
