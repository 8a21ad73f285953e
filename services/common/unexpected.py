"""What a caller gets for an exception that is not a refusal (``ServiceError``).

Redis being unreachable (down, restarting, failing over: ``redis_client.is_outage``) is
``unavailable``: the caller tries again, as the protocol says, and is served once Redis
is back. Redis full (``maxmemory`` reached) is ``unavailable`` too, logged ``store_full``
as an error: nothing frees memory but finished tables expiring, or an operator. A
store's own ``StoreUnavailable`` is the one or the other, as its ``full`` says.
Anything else is a bug: logged with its type and trace (never its text, which may hold
a name: ``logs.exception_fields``) and answered ``internal``.
"""

from __future__ import annotations

import logging

from redis.exceptions import OutOfMemoryError

from services.common.errors import ServiceError, StoreUnavailable
from services.common.logs import event, exception_fields
from services.common.redis_client import is_outage

__all__ = ["refusal_for"]


def refusal_for(log: logging.Logger, rpc: str, exc: BaseException) -> ServiceError:
    """The refusal for ``exc`` raised by ``rpc``, logged on ``log``."""
    if isinstance(exc, OutOfMemoryError) or (isinstance(exc, StoreUnavailable) and exc.full):
        # maxmemory reached: an operator must act
        event(log, "store_full", logging.ERROR, rpc=rpc)
        return ServiceError("unavailable", "the store is full; try again later")
    if is_outage(exc):
        error_type = exc.reason if isinstance(exc, StoreUnavailable) else type(exc).__name__
        event(log, "store_unavailable", logging.WARNING, rpc=rpc, error_type=error_type)
        return ServiceError("unavailable", "the store did not answer; try again")
    event(log, "internal_error", logging.ERROR, rpc=rpc, **exception_fields(exc))
    return ServiceError("internal", "internal error")
