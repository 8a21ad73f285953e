"""``python -m services.matchmaker``: run the matchmaker from environment settings."""

from __future__ import annotations

from services.matchmaker.server import main

main()
