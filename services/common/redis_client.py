"""The one way services open Redis: from a URL, decoding responses to ``str``."""

from __future__ import annotations

import redis.asyncio as aioredis

__all__ = ["connect"]


def connect(url: str) -> aioredis.Redis:
    return aioredis.Redis.from_url(url, decode_responses=True, health_check_interval=10)
