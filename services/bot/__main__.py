"""``python -m services.bot``: run the bot service from environment settings."""

from __future__ import annotations

from services.bot.server import main

main()
