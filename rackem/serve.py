"""``rackem serve gateway|table|matchmaker|bot``: run one service, configured by environment."""

from __future__ import annotations

import argparse
import importlib
from typing import Any

SERVICES = ("gateway", "table", "matchmaker", "bot")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "serve",
        help="run one service (settings from environment variables: PORT, REDIS_URL, ...)",
    )
    p.add_argument("service", choices=SERVICES)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    server = importlib.import_module(f"services.{args.service}.server")
    server.main()
    return 0
