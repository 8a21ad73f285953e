"""The services' Redis client: many more concurrent commands than pooled connections."""

from __future__ import annotations

import asyncio

from services.common.redis_client import MAX_CONNECTIONS, connect


async def test_commands_beyond_the_pool_wait_for_a_connection_instead_of_failing(
    redis_url: str,
) -> None:
    client = connect(redis_url)
    try:
        many = MAX_CONNECTIONS * 20

        async def one(i: int) -> str:
            await client.set(f"pool-test:{i}", str(i))
            # BLPOP with a timeout holds its connection for a while, as slow commands do
            await client.blpop([f"pool-test:none:{i}"], timeout=0.05)
            value = await client.get(f"pool-test:{i}")
            assert value is not None
            return str(value)

        values = await asyncio.gather(*(one(i) for i in range(many)))
        assert values == [str(i) for i in range(many)]
    finally:
        await client.aclose()
