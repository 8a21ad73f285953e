"""Rate limits: a token bucket per connection, an abuse counter, and new games per address.

Addresses live only in ``GameLimiter``'s memory, for at most one window; they are never
logged or stored.
"""

from __future__ import annotations

import ipaddress
import time
from collections import deque
from collections.abc import Callable

__all__ = ["AbuseCounter", "GameLimiter", "TokenBucket", "client_key"]

Clock = Callable[[], float]


class TokenBucket:
    """``rate`` tokens a second up to ``burst``; each message takes one."""

    def __init__(self, rate: float, burst: int, clock: Clock = time.monotonic) -> None:
        self._rate = rate
        self._burst = float(burst)
        self._tokens = float(burst)
        self._clock = clock
        self._last = clock()

    def take(self) -> bool:
        now = self._clock()
        self._tokens = min(self._burst, self._tokens + (now - self._last) * self._rate)
        self._last = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False


class AbuseCounter:
    """True once ``limit`` strikes fall within ``window`` seconds."""

    def __init__(self, limit: int, window: float, clock: Clock = time.monotonic) -> None:
        self._limit = limit
        self._window = window
        self._clock = clock
        self._strikes: deque[float] | None = None  # made by the first strike: most never strike

    def strike(self) -> bool:
        now = self._clock()
        if self._strikes is None:
            self._strikes = deque()
        strikes = self._strikes
        strikes.append(now)
        while strikes and strikes[0] <= now - self._window:
            strikes.popleft()
        return len(strikes) >= self._limit


class GameLimiter:
    """At most ``limit`` new games per address per ``window`` seconds (``limit`` 0: no limit)."""

    def __init__(self, limit: int, window: float, clock: Clock = time.monotonic) -> None:
        self._limit = limit
        self._window = window
        self._clock = clock
        self._starts: dict[str, deque[float]] = {}
        self._next_sweep = clock() + window

    def allow(self, address: str) -> bool:
        """Count one new game for ``address`` if it is under its limit; False when it is not."""
        if self._limit <= 0:
            return True
        now = self._clock()
        if now >= self._next_sweep:
            self._sweep(now)
        starts = self._starts.setdefault(address, deque())
        while starts and starts[0] <= now - self._window:
            starts.popleft()
        if len(starts) >= self._limit:
            return False
        starts.append(now)
        return True

    def _sweep(self, now: float) -> None:
        """Forget every address whose newest game is older than the window."""
        self._next_sweep = now + self._window
        for address in [a for a, s in self._starts.items() if not s or s[-1] <= now - self._window]:
            del self._starts[address]

    def __len__(self) -> int:
        return len(self._starts)


def client_key(host: str) -> str:
    """The key a client address is limited by: an IPv4 address, or an IPv6 address's /64
    (one household or host usually holds a whole /64)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)
