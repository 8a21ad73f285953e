"""``rackem migrate``: bring the archive's schema (``DATABASE_URL``) to this release's.

The one place migrations run (docs/archive.md): compose's one-shot ``migrate`` service and
the Kubernetes Job before the tables. Idempotent: a database already at this release's
schema, or at a newer one, is left as it is. ``--check`` only says where it stands (exit 1
while it is behind), and ``--wait SECONDS`` keeps trying meanwhile: a database that does
not answer yet, or (with ``--check``) a schema still behind — an init container's wait
for the migration.

Prints one JSON object: ``{"database": URL without its password, "before": …, "after": …,
"head": …, "state": "current"|"behind"|"ahead"}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

EXIT_OK, EXIT_BEHIND, EXIT_FAILED = 0, 1, 2


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "migrate", help="apply the archive's schema migrations to DATABASE_URL"
    )
    p.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", ""),
        metavar="URL",
        help="sqlite:///PATH or postgresql://… (default: DATABASE_URL)",
    )
    p.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if the schema is behind"
    )
    p.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="retry this long while the database does not answer (--check: or is behind)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from sqlalchemy.exc import OperationalError

    from services.archive import SchemaStatus, migrate, parse_database_url, status
    from services.common.settings import SettingsError

    if not args.database_url:
        return _fail("no database: set DATABASE_URL or give --database-url")
    try:
        url = parse_database_url(args.database_url)
    except SettingsError as exc:
        return _fail(str(exc))
    deadline = time.monotonic() + args.wait
    while True:
        try:
            before: SchemaStatus | None
            if args.check:
                before, after = None, status(url)
            else:
                before, after = migrate(url)
        except OperationalError as exc:
            if time.monotonic() < deadline:
                time.sleep(1)
                continue
            reason = type(exc.orig).__name__ if exc.orig is not None else type(exc).__name__
            return _fail(f"the database at {url.redacted()} does not answer ({reason})")
        if args.check and after.state == "behind" and time.monotonic() < deadline:
            time.sleep(1)
            continue
        break
    print(
        json.dumps(
            {
                "database": url.redacted(),
                "before": list(before.current) if before is not None else list(after.current),
                "after": list(after.current),
                "head": after.head,
                "state": after.state,
            }
        )
    )
    return EXIT_BEHIND if after.state == "behind" else EXIT_OK


def _fail(message: str) -> int:
    print(f"rackem migrate: {message}", file=sys.stderr)
    return EXIT_FAILED
