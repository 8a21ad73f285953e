"""``python -m services.gateway``: run a gateway from environment settings."""

from __future__ import annotations

from services.gateway.server import main

main()
