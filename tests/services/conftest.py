"""Fixtures shared by service tests: servers started in-process on port 0, real gRPC channels."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from services.bot.server import create_server as create_bot_server
from services.bot.settings import BotSettings
from services.common.running import Running as BotRunning


@pytest.fixture
async def bot_server() -> AsyncIterator[BotRunning]:
    """A bot service on a free loopback port."""
    running = await create_bot_server(BotSettings(host="127.0.0.1", port=0))
    yield running
    await running.stop(0)
