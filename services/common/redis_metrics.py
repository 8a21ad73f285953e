"""Our Redis operations, timed and their failures counted, by operation name.

``rackem_redis_command_seconds{op}`` (a histogram) and ``rackem_redis_errors_total{op}``:
``op`` names one of our store's operations (a table's ``append``, the matchmaker's
``quick_join``, ...), a fixed set each store declares and whose children are made up
front, so each shows 0 before its first use. An operation is timed whole, as its caller
waits for it: one script, a pipeline, a batch it joined (``ScriptBatch``) or the few
round trips it makes; commands inside a pipeline are never timed one by one. An error is
what Redis or the way to it raised (``RedisError``, an outage: ``is_outage``), not a
refusal of ours that the operation raises after Redis answered.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from types import TracebackType
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from redis.exceptions import RedisError

from services.common.redis_client import is_outage

__all__ = ["BUCKETS", "RedisOps"]

BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class _Op:
    __slots__ = ("errors", "seconds")

    def __init__(self, seconds: Any, errors: Any) -> None:
        self.seconds = seconds
        self.errors = errors


class _Timing:
    """One use of an operation: ``with ops("append"): ...``."""

    __slots__ = ("_op", "_started")

    def __init__(self, op: _Op) -> None:
        self._op = op
        self._started = 0.0

    def __enter__(self) -> None:
        self._started = time.perf_counter()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._op.seconds.observe(time.perf_counter() - self._started)
        if exc is not None and (isinstance(exc, RedisError) or is_outage(exc)):
            self._op.errors.inc()


class RedisOps:
    """The operations ``ops`` of one store, in ``registry`` (None: in no registry, for a
    store made without one, as tests make them)."""

    def __init__(self, ops: Iterable[str], registry: CollectorRegistry | None = None) -> None:
        seconds = Histogram(
            "rackem_redis_command_seconds",
            "Time one of our Redis operations took, as its caller waited for it",
            ["op"],
            buckets=BUCKETS,
            registry=registry,
        )
        errors = Counter(
            "rackem_redis_errors",
            "Our Redis operations that failed for Redis (an error, or Redis unreachable)",
            ["op"],
            registry=registry,
        )
        self._ops = {op: _Op(seconds.labels(op), errors.labels(op)) for op in ops}

    def __call__(self, op: str) -> _Timing:
        """Time ``op`` (one of the store's names) over a ``with`` block."""
        return _Timing(self._ops[op])
