"""The gateway holds no game logic: no module of it imports rackcore, nor services.convert
(rackcore's values ⇄ protobuf), and a gateway process never loads either."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import rackcore
import services.gateway
from services.gateway import follow

ROOT = Path(services.gateway.__file__).parent
REPO = ROOT.parents[1]
BANNED = ("rackcore", "services.convert")


def _imports(tree: ast.AST, package: str) -> list[tuple[str, int]]:
    """Every module a tree imports, relative imports resolved from ``package``, with lines."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([base] if base else [])])
            found.append((base, node.lineno))
            found += [(f"{base}.{alias.name}", node.lineno) for alias in node.names]
    return found


def _banned(module: str) -> bool:
    return any(module == name or module.startswith(f"{name}.") for name in BANNED)


def _offending(source: str, package: str = "services.gateway") -> list[str]:
    return [f"{m}:{line}" for m, line in _imports(ast.parse(source), package) if _banned(m)]


def test_no_gateway_module_imports_rackcore_or_services_convert() -> None:
    sources = sorted(ROOT.rglob("*.py"))
    assert {"session.py", "messages.py", "follow.py", "watch.py"} <= {p.name for p in sources}
    offending = {
        str(path.relative_to(ROOT)): found
        for path in sources
        if (found := _offending(path.read_text(encoding="utf-8")))
    }
    assert offending == {}


def test_the_check_catches_every_form_of_import() -> None:
    caught = _offending(
        "import os\n"
        "import rackcore\n"
        "from rackcore import SPECTATOR\n"
        "from rackcore.bots import choose\n"
        "import services.convert as c\n"
        "from services import convert\n"
        "from .. import convert\n"
        "from services.gateway import messages\n"
        "import rackcorex\n"
    )
    assert sorted({int(c.rsplit(":", 1)[1]) for c in caught}) == [2, 3, 4, 5, 6, 7]


def test_a_gateway_process_loads_neither() -> None:
    """The gateway's process entry point (and what it imports in turn) loads no rackcore."""
    code = (
        "import sys, services.gateway.server, services.gateway.app\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'rackcore' "
        "or m == 'services.convert'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_the_gateways_spectator_seat_is_rackcores() -> None:
    assert follow.SPECTATOR == rackcore.SPECTATOR
