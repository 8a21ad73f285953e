"""The gateway's check of a client frame: ``services.gateway.protocol.parse`` (orjson, then the
message type's schema, ``services/gateway/schema.py``), per frame.

Run ``python3 bench/frame_bench.py [--rounds R] [--number N] [--against REV] [--json]``. It
times N checks of each frame below, R rounds: a ``move`` (every move of every player passes
it), a ``draw`` move, ``hello``, ``create_table``, ``ping`` and a move refused for a
mistyped slot. With ``--against REV`` the same ``parse`` runs also with the schema module of
that git revision (``git show REV:services/gateway/schema.py``, given the same schema files),
the two sides alternating frame by frame, so both meet the same machine. Figures are CPU
time per check in µs (the median and the best of the rounds); the load average is printed
before and after. Compare figures from one run, not across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # this tree's code, not an installed copy's
    sys.path.insert(0, str(ROOT))

from services.gateway import protocol, schema  # noqa: E402

FRAMES = {
    "move": '{"type":"move","move":{"act":"place","slot":3},"id":"p17-1","version":17}',
    "move_draw": '{"type":"move","move":{"act":"draw","from":"stock"},"id":"p17-2","version":17}',
    "hello": '{"type":"hello","version":1,"client":"rackem-web/1"}',
    "create_table": (
        '{"type":"create_table","name":"Ann","rules":{"players":2,"target":500},'
        '"level":"easy","start_now":true}'
    ),
    "ping": '{"type":"ping","t":1764412345678}',
    "bad_move": '{"type":"move","move":{"act":"place","slot":"3"},"id":"p17-1","version":17}',
}
LIMIT = 4096


def schemas_of(module: types.ModuleType) -> dict[str, Any]:
    """Every message type's schema, compiled by ``module``'s ``Schema``."""
    folder = resources.files("services.gateway") / "schemas"
    return {
        name: module.Schema(json.loads((folder / f"{name}.json").read_text(encoding="utf-8")))
        for name in (*protocol.CLIENT_TYPES, *protocol.SERVER_TYPES)
    }


def module_at(rev: str) -> types.ModuleType:
    """``services/gateway/schema.py`` as it was at git revision ``rev``."""
    source = subprocess.run(
        ["git", "show", f"{rev}:services/gateway/schema.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    module = types.ModuleType(f"schema_at_{rev}")
    sys.modules[module.__name__] = module  # dataclasses and typing look their module up
    exec(compile(source, f"{rev}:services/gateway/schema.py", "exec"), module.__dict__)
    return module


def per_check_us(table: Mapping[str, Any], frame: str, number: int) -> float:
    """CPU µs per ``parse(frame)`` with ``table`` as the schemas it reads."""
    protocol.schemas = lambda: table  # type: ignore[assignment]  # parse reads the global
    parse: Callable[[str, int], Any] = protocol.parse
    started = time.process_time()
    for _ in range(number):
        try:  # noqa: SIM105 (contextlib.suppress would add its own cost to every check)
            parse(frame, LIMIT)
        except protocol.ProtocolError:
            pass
    return (time.process_time() - started) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--number", type=int, default=10_000)
    parser.add_argument("--against", metavar="REV", help="also time REV's schema module")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()

    sides = {"now": schemas_of(schema)}
    if args.against:
        sides[args.against] = schemas_of(module_at(args.against))
    times: dict[str, dict[str, list[float]]] = {s: {f: [] for f in FRAMES} for s in sides}
    load_before = os.getloadavg()
    for n in range(args.rounds):
        order = list(sides) if n % 2 == 0 else list(sides)[::-1]
        for kind, frame in FRAMES.items():
            for side in order:  # frame by frame, so both sides meet the same moment
                times[side][kind].append(per_check_us(sides[side], frame, args.number))
    load_after = os.getloadavg()

    figures = {
        side: {
            kind: {"median_us": round(statistics.median(xs), 2), "best_us": round(min(xs), 2)}
            for kind, xs in by_kind.items()
        }
        for side, by_kind in times.items()
    }
    out = {
        "rounds": args.rounds,
        "number": args.number,
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in load_after],
        "figures": figures,
    }
    if args.json:
        print(json.dumps(out))
        return
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (1 min)")
    print(f"{'frame':14s}" + "".join(f"{side:>22s}" for side in figures))
    for kind in FRAMES:
        row = "".join(
            f"{f[kind]['median_us']:>12.2f} ({f[kind]['best_us']:5.2f})" for f in figures.values()
        )
        print(f"{kind:14s}{row}")
    print("µs of CPU per check: median of the rounds (best)")


if __name__ == "__main__":
    main()
