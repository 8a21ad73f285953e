"""``python -m services.table``: run a table replica from environment settings."""

from __future__ import annotations

from services.table.server import main

main()
