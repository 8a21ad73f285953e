"""The gateway's gRPC channels: the matchmaker, the bot service (hints and reviews), and the
table service by replica address.

A table request goes to the replica that owns the table. A replica that does not own
it answers ``wrong_replica`` with the owner's address (``rackem-owner``), which is
dialed next; a replica that does not answer is retried through ``TABLE_ADDR``, the
address that balances over every replica and routes to the new owner.

Two partitions are answered here (docs/design.md, *A failover*):

- a replica cut from Redis answers ``wrong_replica`` naming no owner. Where the balanced
  link itself landed on it, that link is set aside (``spread``) and the call tried again
  on a new one, which ``round_robin`` sends to the next replica, up to
  ``BALANCED_TRIES`` times;
- an owner this gateway cannot reach (a call to it failed ``unavailable`` in the last
  ``UNREACHED_S``) is not dialed again when a ``wrong_replica`` names it: the call goes
  to the balanced address with ``unreachable`` set to it, a complaint that moves the
  table to a replica this gateway can reach once complaints have stood a while.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import grpc

from services._gen.rackem.v1 import game_pb2, table_pb2
from services._gen.rackem.v1.bot_pb2_grpc import BotStub
from services._gen.rackem.v1.matchmaker_pb2_grpc import MatchmakerStub
from services._gen.rackem.v1.table_pb2_grpc import TableStub
from services.common.channels import open_channel
from services.common.errors import ServiceError, from_rpc_error
from services.gateway.bot_client import BotClient
from services.gateway.matchmaker_client import MatchmakerClient
from services.gateway.table_client import Counts, LinkFeed, LocalLinks, TableLink, dial

if TYPE_CHECKING:
    from services._gen.rackem.v1.table_pb2_grpc import TableAsyncStub

__all__ = ["BALANCED_TRIES", "UNREACHED_S", "Backends", "flagged", "reroute"]

T = TypeVar("T")
MAX_HOPS = 4
BALANCED_TRIES = 3
"""New balanced links a call tries when the replica behind one cannot serve any table."""
UNREACHED_S = 10.0
"""How long an owner this gateway failed to reach is complained of rather than dialed."""
MAX_CHANNELS = 64
"""Replica channels kept open when idle: past this many, the least recently used channel
with no subscription and no call open on it is closed. Channels in use are never
closed for the cap, so a fleet larger than it keeps every subscription."""
# A replica that went away comes back (or its address is taken over) within seconds: dial
# it again soon, not after gRPC's default backoff of up to two minutes.
# A path that drops packets, or a replica whose process is stopped (its kernel still
# holds the connection), is found by keepalive pings within about 4 s (the servers allow
# them: services/common/grpc_server.py), so a link to a replica this gateway cannot reach
# breaks instead of waiting forever for answers that never come. gRPC core waits for a
# ping's answer ``grpc.http2.ping_timeout_ms`` (a minute by default), not
# ``keepalive_timeout_ms``: both are set (tests/services/gateway/test_keepalive.py).
CHANNEL_OPTIONS = (
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 5000),
    ("grpc.keepalive_time_ms", 2000),
    ("grpc.keepalive_timeout_ms", 2000),
    ("grpc.http2.ping_timeout_ms", 2000),
    ("grpc.http2.max_pings_without_data", 0),
)


_NOT_THERE = frozenset({"unavailable", "shutting_down", "wrong_replica"})
"""Refusals that say the table is not served where they came from."""


class _Flaggable(Protocol):
    unreachable: str

    def CopyFrom(self, other_msg: Any) -> None: ...


F = TypeVar("F", bound=_Flaggable)


def flagged(request: F, unreachable: str) -> F:
    """``request``, or a copy of it carrying ``unreachable`` (the owner complained of)."""
    if not unreachable:
        return request
    copy = type(request)()
    copy.CopyFrom(request)
    copy.unreachable = unreachable
    return copy


def reroute(err: ServiceError, target: str, fallback: str) -> str | None:
    """Where to send a table request next after ``err`` from ``target``, or None: give up."""
    if err.code == "wrong_replica" and err.owner and err.owner != target:
        return err.owner
    if err.code in ("unavailable", "shutting_down", "wrong_replica") and target != fallback:
        return fallback
    return None


class Backends:
    """Channels opened in the app's lifespan and closed with it."""

    def __init__(
        self,
        matchmaker_addr: str,
        table_addr: str,
        timeout: float,
        local_links: LocalLinks | None = None,
        matchmaker: MatchmakerClient | None = None,
        max_channels: int = MAX_CHANNELS,
        link_pace_s: float = 0.0,
        link_counts: Counts | None = None,
        interceptors: Sequence[Any] = (),
        bot_addr: str = "",
        bots: BotClient | None = None,
    ) -> None:
        """Every channel is opened with ``interceptors`` (services/common/grpc_metrics.py).
        ``bots``: the bot service to call (``rackem up``'s, in this process); else its gRPC
        stub at ``bot_addr`` (empty: none, and every bot call is ``unavailable``)."""
        self.timeout = timeout
        self._interceptors = interceptors
        self._link_pace_s = link_pace_s
        self._link_counts = link_counts
        self._max_channels = max_channels
        self._local_links = local_links
        self.table_addr = table_addr
        # A matchmaker given (``rackem up``'s, in this process) is called as it is; else
        # its gRPC stub.
        self._mm_channel: grpc.aio.Channel | None = None
        if matchmaker is None:
            self._mm_channel = open_channel(matchmaker_addr, CHANNEL_OPTIONS, interceptors)
            matchmaker = MatchmakerStub(self._mm_channel)
        self.matchmaker: MatchmakerClient = matchmaker
        self._bot_channel: grpc.aio.Channel | None = None
        if bots is None and bot_addr:
            self._bot_channel = open_channel(bot_addr, CHANNEL_OPTIONS, interceptors)
            bots = BotStub(self._bot_channel)
        self._bots = bots
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._stubs: dict[str, TableAsyncStub] = {}
        self._links: dict[str, TableLink] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self._retired: list[TableLink] = []  # balanced links set aside, closed once idle
        self._unreached: dict[str, float] = {}  # owner address -> when a call to it failed
        self.table(table_addr)

    def table(self, addr: str = "") -> TableAsyncStub:
        """The Table stub for a replica address (``TABLE_ADDR`` when empty)."""
        addr = addr or self.table_addr
        stub = self._stubs.get(addr)
        if stub is None:
            if len(self._channels) >= self._max_channels:
                self._evict()
            channel = open_channel(addr, CHANNEL_OPTIONS, self._interceptors)
            self._channels[addr] = channel
            stub = self._stubs[addr] = TableStub(channel)
        else:
            self._channels[addr] = self._channels.pop(addr)  # the most recently used now
        return stub

    def link(self, addr: str = "") -> TableLink:
        """The link to a replica address (``TABLE_ADDR`` when empty); a broken one is replaced."""
        addr = addr or self.table_addr
        link = self._links.get(addr)
        if link is None or link.broken is not None:
            link = self._links[addr] = self._open_link(addr)
        elif addr in self._channels:
            self._channels[addr] = self._channels.pop(addr)  # the most recently used now
        return link

    def spread(self) -> None:
        """The balanced link's replica cannot serve tables (it answered ``wrong_replica``
        with no owner): the next balanced call goes out on a new link, which round_robin
        sends to another replica. The old one ends once nothing is open on it."""
        old = self._links.pop(self.table_addr, None)
        if old is not None:
            self._retired.append(old)
        idle = [link for link in self._retired if not link.busy]
        self._retired = [link for link in self._retired if link.busy]
        for link in idle:
            task = asyncio.ensure_future(link.close())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    def unreached(self, addr: str, failed: bool = False) -> bool:
        """Whether a call to the owner at ``addr`` failed ``unavailable`` lately (``failed``:
        one just did)."""
        now = time.monotonic()
        if failed:
            self._unreached[addr] = now
        since = self._unreached.get(addr)
        return since is not None and now - since < UNREACHED_S

    def reached(self, addr: str) -> None:
        self._unreached.pop(addr, None)

    def next_hop(self, err: ServiceError, target: str) -> tuple[str | None, str]:
        """Where to go after ``err`` from ``target`` (``reroute``), and the owner to
        complain of there (``""``: none): an owner named that this gateway failed to reach
        lately is not dialed again, the balanced address is asked to take the table."""
        fallback = self.table_addr
        if target != fallback and err.code == "unavailable":
            self.unreached(target, failed=True)
        next_target = reroute(err, target, fallback)
        if next_target is not None and next_target != fallback and self.unreached(next_target):
            return fallback, next_target
        return next_target, ""

    def _open_link(self, addr: str) -> TableLink:
        """A link to ``addr``: what ``local_links`` opens to it, if anything; else over gRPC."""
        local = self._local_links(addr) if self._local_links is not None else None
        if local is not None:
            return local
        return dial(self.table(addr), self._link_pace_s, self._link_counts)

    def _evict(self) -> None:
        """Close the least recently used channel that is not in use, if there is one."""
        for oldest in self._channels:
            link = self._links.get(oldest)
            if oldest != self.table_addr and (link is None or not link.busy):
                break
        else:
            return
        channel = self._channels.pop(oldest)
        del self._stubs[oldest]
        link = self._links.pop(oldest, None)
        task = asyncio.ensure_future(self._close_channel(channel, link))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _close_channel(self, channel: grpc.aio.Channel, link: TableLink | None) -> None:
        if link is not None:
            await link.close()
        await channel.close(grace=self.timeout)

    async def call_matchmaker(self, call: Callable[[MatchmakerClient], Awaitable[T]]) -> T:
        try:
            return await call(self.matchmaker)
        except grpc.aio.AioRpcError as exc:
            raise from_rpc_error(exc) from None

    async def call_bot(self, call: Callable[[BotClient], Awaitable[T]]) -> T:
        """``call`` on the bot service; its refusal as a ``ServiceError``."""
        if self._bots is None:
            raise ServiceError("unavailable", "no bot service is configured")
        try:
            return await call(self._bots)
        except grpc.aio.AioRpcError as exc:
            raise from_rpc_error(exc) from None

    async def call_table(
        self, addr: str, call: Callable[[TableAsyncStub], Awaitable[T]]
    ) -> tuple[T, str]:
        """``call`` at the table's owner, starting at ``addr``; the answer and who gave it."""

        async def attempt(target: str, unreachable: str) -> T:
            try:
                return await call(self.table(target))
            except grpc.aio.AioRpcError as exc:
                raise from_rpc_error(exc) from None

        return await self._at_owner(addr, attempt)

    async def submit(
        self,
        addr: str,
        request: table_pb2.SubmitMoveRequest,
        answered: Callable[[str], None] | None = None,
    ) -> int:
        """A move at the table's owner, starting at ``addr``: the table's version after it.
        Redirected and retried as ``call_table`` is (never applied twice: its ``move_id``).
        ``answered``: told where the table answered (its answer or its refusal), when that
        is not ``addr``: the table moved (the seat's views should follow it there)."""
        version, _ = await self._at_owner(
            addr,
            lambda target, to: self.link(target).submit(flagged(request, to), self.timeout),
            answered,
        )
        return version

    async def continue_round(
        self,
        addr: str,
        request: table_pb2.SeatRequest,
        answered: Callable[[str], None] | None = None,
    ) -> None:
        """The seat is ready for the next round, at the table's owner (as ``submit``)."""
        await self._at_owner(
            addr,
            lambda target, to: self.link(target).continue_round(flagged(request, to), self.timeout),
            answered,
        )

    async def leave(self, addr: str, request: table_pb2.SeatRequest) -> None:
        """The seat leaves its table for good, at the table's owner (as ``submit``)."""
        await self._at_owner(
            addr, lambda target, to: self.link(target).leave(flagged(request, to), self.timeout)
        )

    async def _at_owner(
        self,
        addr: str,
        attempt: Callable[[str, str], Awaitable[T]],
        answered: Callable[[str], None] | None = None,
    ) -> tuple[T, str]:
        """``attempt`` at ``addr`` (``TABLE_ADDR`` when empty), then where ``next_hop``
        says, with the owner to complain of; a balanced replica that cannot serve is left
        for another one (``spread``) up to ``BALANCED_TRIES`` times. ``answered`` hears
        where the table answered, if that is not where the call started."""
        fallback = self.table_addr
        start = target = addr or fallback
        unreachable = ""
        spread = 0
        for _ in range(MAX_HOPS + BALANCED_TRIES):
            try:
                answer = await attempt(target, unreachable)
            except ServiceError as err:
                if answered is not None and target != start and err.code not in _NOT_THERE:
                    answered(target)  # the table refused it there: it is served there
                next_target, unreachable = self.next_hop(err, target)
                if next_target is None:
                    if err.code != "wrong_replica" or err.owner or spread >= BALANCED_TRIES:
                        if err.code == "wrong_replica":  # nobody could serve it: try again
                            raise ServiceError("unavailable", err.message) from None
                        raise
                    spread += 1
                    self.spread()
                    next_target = fallback
                target = next_target
                continue
            if target != fallback:
                self.reached(target)
            if answered is not None and target != start:
                answered(target)
            return answer, target
        raise ServiceError("unavailable", "no table replica answered")

    def subscribe(
        self,
        addr: str,
        request: table_pb2.SeatRequest,
        on_view: Callable[[game_pb2.TableView], None],
        unreachable: str = "",
    ) -> LinkFeed:
        """The seat's views from the replica at ``addr`` (``TABLE_ADDR`` when empty);
        ``unreachable``: the owner to complain of there."""
        return self.link(addr).subscribe(flagged(request, unreachable), on_view)

    def watch(
        self,
        addr: str,
        request: table_pb2.SummaryRequest,
        on_view: Callable[[game_pb2.TableView], None],
        unreachable: str = "",
    ) -> LinkFeed:
        """A spectator's views from the replica at ``addr`` (``TABLE_ADDR`` when empty)."""
        return self.link(addr).watch(flagged(request, unreachable), on_view)

    async def close(self) -> None:
        links = [*self._links.values(), *self._retired]
        self._links.clear()
        self._retired.clear()
        await asyncio.gather(*(link.close() for link in links))
        channels = [
            c
            for c in (self._mm_channel, self._bot_channel, *self._channels.values())
            if c is not None
        ]
        self._channels.clear()
        self._stubs.clear()
        await asyncio.gather(*(c.close(grace=None) for c in channels), *self._closing)
