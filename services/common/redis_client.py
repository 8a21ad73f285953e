"""The one way services open Redis: from a URL, decoding responses to ``str``.

Connections come from a *blocking* pool of ``MAX_CONNECTIONS``: when a thousand tables
append a move at once, the commands wait their turn for a connection (Redis runs one
command at a time anyway) instead of failing. redis-py's default pool refuses the
101st concurrent command outright, which under load closed tables for "store errors"
that were only a full pool.
"""

from __future__ import annotations

import redis.asyncio as aioredis

__all__ = ["MAX_CONNECTIONS", "POOL_WAIT_S", "connect"]

MAX_CONNECTIONS = 64
POOL_WAIT_S = 5.0  # a command waits this long for a free connection, then fails


def connect(url: str) -> aioredis.Redis:
    pool = aioredis.BlockingConnectionPool.from_url(
        url,
        max_connections=MAX_CONNECTIONS,
        timeout=POOL_WAIT_S,
        decode_responses=True,
        health_check_interval=10,
    )
    return aioredis.Redis.from_pool(pool)
