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
    """The service's ``main``, traced if the ``OTEL_*`` variables say so (docs/tracing.md):
    tracing starts before the service opens any server or channel, and its last spans are
    flushed once ``main`` returns from its graceful stop."""
    from services.common import tracing

    traces = tracing.configure(args.service)
    try:
        server = importlib.import_module(f"services.{args.service}.server")
        server.main()
    finally:
        traces.shutdown()
    return 0
