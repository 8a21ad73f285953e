"""ScriptBatch against a real Redis: one pipeline per batch, each call its own answer."""

from __future__ import annotations

import asyncio
import secrets
import socket
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis
from redis.asyncio.client import Pipeline
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from services.common.redis_client import connect
from services.common.script_batch import ScriptBatch

pytestmark = pytest.mark.containers

# Adds ARGV[1] to the counter at KEYS[1] and answers the new value: an error when the
# key holds something that is not a number.
_ADD = "return redis.call('INCRBY', KEYS[1], ARGV[1])"


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    redis = connect(redis_url)
    yield redis
    await redis.aclose()


def _key() -> str:
    return f"test:batch:{secrets.token_hex(6)}"


async def test_a_lone_call_goes_out_at_once_in_its_own_batch(client: aioredis.Redis) -> None:
    batch = ScriptBatch(client, client.register_script(_ADD))
    key = _key()
    assert await batch([key], [5]) == 5
    assert await batch([key], [2]) == 7
    assert (batch.pipelines, batch.calls) == (2, 2)


class _CountingPipelines(aioredis.Redis):
    """A real client that counts the pipelines it opens."""

    opened = 0

    def pipeline(self, transaction: bool = True, shard_hint: str | None = None) -> Pipeline:
        self.opened += 1
        return super().pipeline(transaction, shard_hint)


async def test_a_lone_call_is_a_plain_command_and_only_a_batch_opens_a_pipeline(
    redis_url: str,
) -> None:
    client = _CountingPipelines.from_url(redis_url, decode_responses=True)
    try:
        batch = ScriptBatch(client, client.register_script(_ADD))
        key, bad = _key(), _key()
        await client.set(bad, "not a number")
        assert await batch([key], [5]) == 5  # NOSCRIPT as its answer: loaded, sent again
        await client.script_flush()
        assert await batch([key], [2]) == 7
        with pytest.raises(ResponseError):
            await batch([bad], [1])
        assert client.opened == 0
        assert sorted(await asyncio.gather(batch([key], [1]), batch([key], [1]))) == [8, 9]
        assert client.opened == 1
    finally:
        await client.aclose()


async def test_calls_made_together_share_a_pipeline_and_keep_their_answers(
    client: aioredis.Redis,
) -> None:
    batch = ScriptBatch(client, client.register_script(_ADD))
    keys = [_key() for _ in range(40)]
    answers = await asyncio.gather(*(batch([k], [n + 1]) for n, k in enumerate(keys)))
    assert answers == [n + 1 for n in range(40)]
    assert [int(v) for v in await client.mget(keys)] == answers
    assert (batch.pipelines, batch.calls) == (1, 40)


async def test_calls_made_while_a_batch_is_out_go_in_the_next_and_batches_are_bounded(
    client: aioredis.Redis,
) -> None:
    batch = ScriptBatch(client, client.register_script(_ADD), max_batch=3)
    key = _key()
    first = asyncio.ensure_future(batch([key], [1]))
    await asyncio.sleep(0)  # the first batch (one call) is on its way
    rest = [asyncio.ensure_future(batch([key], [1])) for _ in range(7)]
    results = await asyncio.gather(first, *rest)
    assert sorted(results) == list(range(1, 9))
    # 1 alone, then the 7 that came meanwhile, 3 at most per pipeline.
    assert (batch.pipelines, batch.calls) == (4, 8)


async def test_a_scripts_error_reaches_only_its_caller(client: aioredis.Redis) -> None:
    batch = ScriptBatch(client, client.register_script(_ADD))
    good, bad = _key(), _key()
    await client.set(bad, "not a number")
    answers = await asyncio.gather(
        batch([good], [1]), batch([bad], [1]), batch([good], [1]), return_exceptions=True
    )
    assert answers[0] in (1, 2) and answers[2] in (1, 2) and answers[0] != answers[2]
    assert isinstance(answers[1], ResponseError)
    assert await client.get(bad) == "not a number"
    assert batch.pipelines == 1


async def test_a_script_the_server_forgot_is_loaded_again(client: aioredis.Redis) -> None:
    batch = ScriptBatch(client, client.register_script(_ADD))
    key = _key()
    assert await batch([key], [1]) == 1  # never loaded: NOSCRIPT, loaded, sent again
    await client.script_flush()
    assert await batch([key], [1]) == 2
    await client.script_flush()
    assert sorted(await asyncio.gather(*(batch([key], [1]) for _ in range(3)))) == [3, 4, 5]
    assert batch.pipelines == 3


async def test_a_cancelled_caller_leaves_the_others_answered(client: aioredis.Redis) -> None:
    batch = ScriptBatch(client, client.register_script(_ADD))
    key = _key()
    calls = [asyncio.ensure_future(batch([key], [1])) for _ in range(3)]
    calls[1].cancel()
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert isinstance(results[1], asyncio.CancelledError)
    assert sorted(r for r in results if isinstance(r, int)) in ([1, 2], [1, 3], [2, 3])


async def test_a_dead_server_fails_every_call_of_the_batch_and_the_next_batch_still_runs(
    client: aioredis.Redis,
) -> None:
    # Bound and never listening for the whole test: a connection there is refused, and no
    # other server can take the port meanwhile (as it could once the socket closed).
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        dead = aioredis.Redis.from_url(
            f"redis://127.0.0.1:{port}/0", socket_connect_timeout=1, retry_on_error=[]
        )
        try:
            batch = ScriptBatch(dead, dead.register_script(_ADD))
            answers = await asyncio.gather(
                *(batch([_key()], [1]) for _ in range(3)), return_exceptions=True
            )
            assert all(isinstance(a, RedisConnectionError | OSError) for a in answers)
            assert batch.pipelines == 1
            again = await asyncio.gather(batch([_key()], [1]), return_exceptions=True)
            assert isinstance(again[0], RedisConnectionError | OSError)
            assert batch.pipelines == 2
        finally:
            await dead.aclose()
