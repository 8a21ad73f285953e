"""``rackem verify FILE``: re-derive a logged match and print one JSON verdict."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rackcore import LogError, verify

EXIT_VALID, EXIT_INVALID, EXIT_MALFORMED = 0, 1, 2


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("verify", help="check a rackem-match/1 log ('-' for stdin)")
    p.add_argument("file", help="the log file; a JSON object, or a server match line")
    p.set_defaults(func=run)


def load_log(path: str) -> Any:
    """Read a log: a bare ``rackem-match/1`` object or a server record holding one in ``match``."""
    if path == "-":
        text = sys.stdin.read()
    else:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    data = json.loads(text)
    if isinstance(data, dict) and "format" not in data and isinstance(data.get("match"), dict):
        data = data["match"]
    return data


def run(args: argparse.Namespace) -> int:
    try:
        log = load_log(args.file)
    except OSError as exc:
        return _malformed(f"cannot read {args.file}: {exc.strerror}")
    except (ValueError, UnicodeDecodeError):
        return _malformed("the file is not JSON")
    try:
        verdict = verify(log)
    except LogError as exc:
        return _malformed(str(exc))
    print(json.dumps(verdict))
    return EXIT_VALID if verdict["valid"] else EXIT_INVALID


def _malformed(reason: str) -> int:
    print(json.dumps({"valid": False, "error": {"move_index": None, "reason": reason}}))
    return EXIT_MALFORMED
