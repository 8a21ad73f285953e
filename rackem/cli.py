"""The ``rackem`` command: a thin dispatcher over one module per subcommand."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Each module has ``register(subparsers)``, which adds its parser and sets ``func``.
# Modules keep their heavy imports inside ``func`` so that ``rackem --help`` is quick.
COMMANDS = (
    "rackem.verify",
    "rackem.replay",
    "rackem.review",
    "rackem.up",
    "rackem.serve",
    "rackem.play",
    "rackem.tournament",
    "rackem.migrate",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rackem", description="Online Rack-O.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
