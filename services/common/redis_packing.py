"""Commands packed by hiredis on redis-py's asyncio connections, as its sync ones pack them.

redis-py's asyncio connections encode each argument in Python before they pack a command
(in Python, or since 8.2 with ``HiredisRespSerializer``, which still encodes first); a table
replica packs one ``EVALSHA`` per move and per lease it renews, a dozen arguments each.
Here the whole command goes to ``hiredis.pack_command`` in one call (what that saves, and
why this reach under redis-py's surface is held on purpose: docs/dependencies.md, "Held
internals"; tests/contracts/test_redis_packer.py). ``hiredis_packing(cls)`` is ``cls``
packing with hiredis: the same
bytes (tests/services/common/test_redis_packing.py holds them equal), the same first
argument split (``"CONFIG GET"`` is two), and the same refusal of a value Redis has no
form for (``DataError``). ``redis_client.connect`` gives every mode's connections this
packer.
"""

from __future__ import annotations

from typing import Any, TypeVar

import hiredis
from redis.asyncio.connection import AbstractConnection

__all__ = ["hiredis_packing"]

C = TypeVar("C", bound=type[AbstractConnection])


def _pack_command(self: AbstractConnection, *args: Any) -> list[bytes]:
    """``args`` in the Redis protocol, as redis-py's ``pack_command`` writes them."""
    first = args[0]
    if isinstance(first, str):
        args = (*first.encode().split(), *args[1:])
    elif b" " in first:
        args = (*first.split(), *args[1:])
    try:
        return [hiredis.pack_command(args)]
    except TypeError:  # bool, None, a list...: redis-py refuses them (``DataError``)
        return AbstractConnection.pack_command(self, *args)


_made: dict[type[AbstractConnection], type[AbstractConnection]] = {}


def hiredis_packing(base: C) -> C:
    """``base`` (a redis-py asyncio connection class) packing its commands with hiredis;
    one class per ``base``."""
    packing = _made.get(base)
    if packing is None:
        name = f"Hiredis{base.__name__}"
        packing = _made[base] = type(name, (base,), {"pack_command": _pack_command})
    return packing  # type: ignore[return-value]
