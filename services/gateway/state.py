"""What one gateway process shares between its connections: settings, channels, limits,
admission, metrics, the reviews it answered, the profile store (with ``DATABASE_URL``).

Besides the live sockets this is the gateway's only state: which local connection holds
which seat token (the newest wins), how many local connections follow each table, the
per-address game limiter, and whether the gateway is taking newcomers.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from typing import Protocol

from services.archive.settings import ArchiveSettings
from services.common.grpc_metrics import client_interceptors
from services.gateway.admission import Admission
from services.gateway.backends import Backends
from services.gateway.bot_client import BotClient
from services.gateway.gc_pauses import GcPauses
from services.gateway.limits import GameLimiter
from services.gateway.matchmaker_client import MatchmakerClient
from services.gateway.metrics import Metrics
from services.gateway.profiles import Profiles
from services.gateway.reviews import Reviews
from services.gateway.settings import GatewaySettings
from services.gateway.table_client import LocalLinks

__all__ = ["GatewayState", "Member"]

REPLACED = 4001  # close code: this seat was resumed by a newer connection


class Member(Protocol):
    def replaced(self) -> None: ...
    def close(self, code: int) -> None: ...
    async def closed(self) -> None: ...


class GatewayState:
    """The gateway process's state, shared by its connections (``app.state.gateway``)."""

    def __init__(
        self,
        settings: GatewaySettings,
        local_links: LocalLinks | None = None,
        matchmaker: MatchmakerClient | None = None,
        bots: BotClient | None = None,
        archive: ArchiveSettings | None = None,
    ) -> None:
        self.settings = settings
        # Profiles (profiles.py) with an archive only; without one their messages are
        # answered ``unavailable``.
        self.profiles = (
            Profiles(archive, settings) if archive is not None and archive.database_url else None
        )
        self._local_links = local_links
        self._local_matchmaker = matchmaker
        self._local_bots = bots
        self.reviews = Reviews(settings.review_cache)
        self.metrics = Metrics(settings.max_connections)
        self._client_metrics = client_interceptors(self.metrics.registry)
        self._gc = GcPauses(self.metrics.gc_pause)
        self.games = GameLimiter(settings.games_per_ip, settings.games_window_s)
        self.admission = Admission(
            self.metrics,
            settings.max_connections,
            settings.overload_lag_ms / 1000,
            settings.overload_window_s,
            answer_limit_s=settings.overload_answer_ms / 1000,
        )
        self._monitor: asyncio.Task[None] | None = None
        self._backends: Backends | None = None
        self._members: set[Member] = set()
        self._tokens: dict[str, Member] = {}
        self._tables: Counter[str] = Counter()
        self.accepting = True

    @property
    def backends(self) -> Backends:
        if self._backends is None:
            raise RuntimeError("the gateway's channels are not open (lifespan not started)")
        return self._backends

    async def open(self) -> None:
        s = self.settings
        self._backends = Backends(
            s.matchmaker_addr,
            s.table_addr,
            s.rpc_timeout_s,
            local_links=self._local_links,
            matchmaker=self._local_matchmaker,
            link_pace_s=s.link_pace_ms / 1000,
            link_counts=self.metrics.link_counts,
            interceptors=self._client_metrics,
            bot_addr=s.bot_addr,
            bots=self._local_bots,
        )
        self._monitor = asyncio.create_task(self.admission.monitor())
        self._gc.start()
        if self.profiles is not None:
            await self.profiles.open()  # (at once if ``create_server`` opened it)

    async def close(self) -> None:
        self._gc.stop()
        if self.profiles is not None:
            await self.profiles.close()
        if self._monitor is not None:
            self._monitor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._monitor
            self._monitor = None
        if self._backends is not None:
            await self._backends.close()
            self._backends = None

    def admits(self) -> bool:
        """Whether to take one more connection now (under the limit, and not overloaded)."""
        return self.admission.admits(len(self._members))

    def join(self, member: Member) -> None:
        self._members.add(member)
        self.metrics.connections.inc()
        self.metrics.connections_total.inc()

    def leave(self, member: Member) -> None:
        """``member`` is gone (it released its token, if it held one)."""
        self._members.discard(member)
        self.metrics.connections.dec()

    def claim(self, token: str, member: Member) -> None:
        """``member`` now holds the seat of ``token``; an older local holder is told and closed."""
        older = self._tokens.get(token)
        self._tokens[token] = member
        if older is not None and older is not member:
            older.replaced()

    def release(self, token: str, member: Member) -> None:
        if self._tokens.get(token) is member:
            del self._tokens[token]

    def following(self, table_id: str, delta: int) -> None:
        """Count a local subscription to ``table_id`` opening (+1) or ending (-1)."""
        before = self._tables[table_id]
        self._tables[table_id] = before + delta
        if before == 0 and delta > 0:
            self.metrics.tables.inc()
            self.metrics.tables_seen.inc()
        if self._tables[table_id] <= 0:
            del self._tables[table_id]
            if before > 0:
                self.metrics.tables.dec()

    async def close_all(self, code: int, timeout: float) -> None:
        """Stop taking connections and close every one with ``code`` (1001: resume elsewhere)."""
        self.accepting = False
        members = tuple(self._members)
        for member in members:
            member.close(code)
        if members:
            await asyncio.wait(
                [asyncio.ensure_future(m.closed()) for m in members], timeout=timeout
            )
