"""One mapping between error causes, gRPC status codes and protocol error codes.

Services raise ``ServiceError(code, message)`` (or let a ``rackcore.RackError``
through ``from_rack``); ``abort`` turns it into a gRPC status with the stable
code in the trailing metadata ``rackem-error``; ``from_rpc_error`` reads it back
on the calling side. Unexpected exceptions are logged and become ``internal``
with a fixed message: their text is never sent to a client. A store that cannot serve
for now raises ``StoreUnavailable``, which callers answer ``unavailable``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn, cast

import grpc

if TYPE_CHECKING:  # (only the table raises them; a gateway process loads no rackcore)
    from rackcore import RackError

__all__ = [
    "CODES",
    "ERROR_KEY",
    "OWNER_KEY",
    "ServiceError",
    "StoreUnavailable",
    "abort",
    "from_rack",
    "from_rpc_error",
]

ERROR_KEY = "rackem-error"
OWNER_KEY = "rackem-owner"

CODES: dict[str, grpc.StatusCode] = {
    "bad_request": grpc.StatusCode.INVALID_ARGUMENT,
    "bad_rules": grpc.StatusCode.INVALID_ARGUMENT,
    "malformed_move": grpc.StatusCode.INVALID_ARGUMENT,
    "bad_name": grpc.StatusCode.INVALID_ARGUMENT,
    "illegal_move": grpc.StatusCode.FAILED_PRECONDITION,
    "not_your_turn": grpc.StatusCode.FAILED_PRECONDITION,
    "match_over": grpc.StatusCode.FAILED_PRECONDITION,
    "not_started": grpc.StatusCode.FAILED_PRECONDITION,
    "already_started": grpc.StatusCode.FAILED_PRECONDITION,
    "table_full": grpc.StatusCode.FAILED_PRECONDITION,
    "no_spectators": grpc.StatusCode.PERMISSION_DENIED,
    "spectators_full": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "no_rematch": grpc.StatusCode.FAILED_PRECONDITION,
    "not_finished": grpc.StatusCode.FAILED_PRECONDITION,  # a review of a match still running
    "wrong_replica": grpc.StatusCode.FAILED_PRECONDITION,
    "stale_version": grpc.StatusCode.ABORTED,
    "bad_token": grpc.StatusCode.UNAUTHENTICATED,
    "not_creator": grpc.StatusCode.PERMISSION_DENIED,
    "profile_required": grpc.StatusCode.PERMISSION_DENIED,  # a rated table, joined without one
    "no_table": grpc.StatusCode.NOT_FOUND,
    "no_code": grpc.StatusCode.NOT_FOUND,
    "no_replica": grpc.StatusCode.UNAVAILABLE,
    "busy": grpc.StatusCode.RESOURCE_EXHAUSTED,  # the bot service's reviews: try again soon
    "unavailable": grpc.StatusCode.UNAVAILABLE,
    "shutting_down": grpc.StatusCode.UNAVAILABLE,
    "internal": grpc.StatusCode.INTERNAL,
}
_BY_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: "bad_request",
    grpc.StatusCode.FAILED_PRECONDITION: "illegal_move",
    grpc.StatusCode.ABORTED: "stale_version",
    grpc.StatusCode.UNAUTHENTICATED: "bad_token",
    grpc.StatusCode.PERMISSION_DENIED: "not_creator",
    grpc.StatusCode.NOT_FOUND: "no_table",
    grpc.StatusCode.UNAVAILABLE: "unavailable",
    grpc.StatusCode.DEADLINE_EXCEEDED: "unavailable",
    # A server that is stopping cancels the calls it has not finished: try again elsewhere.
    grpc.StatusCode.CANCELLED: "unavailable",
}


class ServiceError(Exception):
    """An expected refusal with a stable ``code`` and a message fit for a player."""

    def __init__(self, code: str, message: str, owner: str | None = None) -> None:
        if code not in CODES:
            raise ValueError(f"unknown error code {code}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.owner = owner

    @property
    def status(self) -> grpc.StatusCode:
        return CODES[self.code]


class StoreUnavailable(Exception):
    """A store that cannot serve for now: unreachable, failing over, loading, full, or
    unable to confirm a write on enough replicas. Raised from its client's own error
    (``services.common.redis_client.raise_store_error``); answered ``unavailable``
    (services/common/unexpected.py), never taken for a bug.

    ``reason`` names the client's error (its type); ``again``: the same call may be sent
    again once the store is back (not a write that may be on the primary alone, nor one
    to a full store); ``full``: the store is full, which only data expiring or an
    operator mends.
    """

    def __init__(self, reason: str, *, again: bool = True, full: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.again = again
        self.full = full


def from_rack(exc: RackError) -> ServiceError:
    code = exc.code if exc.code in CODES else "illegal_move"
    return ServiceError(code, str(exc))


async def abort(context: grpc.aio.ServicerContext[object, object], err: ServiceError) -> NoReturn:
    metadata: list[tuple[str, str]] = [(ERROR_KEY, err.code)]
    if err.owner:
        metadata.append((OWNER_KEY, err.owner))
    context.set_trailing_metadata(tuple(metadata))
    await context.abort(err.status, err.message)
    raise AssertionError("abort returned")  # pragma: no cover - abort always raises


def from_rpc_error(exc: grpc.aio.AioRpcError) -> ServiceError:
    """The ``ServiceError`` a failed call carries (``internal``/``unavailable`` if unknown)."""
    code = None
    owner = None
    metadata = cast("Sequence[tuple[str, str | bytes]]", exc.trailing_metadata() or ())
    for key, value in metadata:
        if key == ERROR_KEY and isinstance(value, str) and value in CODES:
            code = value
        elif key == OWNER_KEY and isinstance(value, str):
            owner = value
    if code is None:
        code = _BY_STATUS.get(exc.code(), "internal")
        message = "the service is unavailable" if code == "unavailable" else "internal error"
        if code not in ("internal", "unavailable"):
            message = exc.details() or code
    else:
        message = exc.details() or code
    return ServiceError(code, message, owner)
