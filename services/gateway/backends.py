"""The gateway's gRPC channels: the matchmaker, the bot service (hints and reviews), and the
table service by replica address.

A table request goes to the replica that owns the table. A replica that does not own
it answers ``wrong_replica`` with the owner's address (``rackem-owner``), which is
dialed next; a replica that does not answer is retried through ``TABLE_ADDR``, the
address that balances over every replica and routes to the new owner.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

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

__all__ = ["Backends", "reroute"]

T = TypeVar("T")
MAX_HOPS = 4
MAX_CHANNELS = 64
"""Replica channels kept open when idle: past this many, the least recently used channel
with no subscription and no call open on it is closed. Channels in use are never
closed for the cap, so a fleet larger than it keeps every subscription."""
# A replica that went away comes back (or its address is taken over) within seconds: dial
# it again soon, not after gRPC's default backoff of up to two minutes.
CHANNEL_OPTIONS = (
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 5000),
)


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

        async def attempt(target: str) -> T:
            try:
                return await call(self.table(target))
            except grpc.aio.AioRpcError as exc:
                raise from_rpc_error(exc) from None

        return await self._at_owner(addr, attempt)

    async def submit(self, addr: str, request: table_pb2.SubmitMoveRequest) -> int:
        """A move at the table's owner, starting at ``addr``: the table's version after it.
        Redirected and retried as ``call_table`` is (never applied twice: its ``move_id``)."""
        version, _ = await self._at_owner(
            addr, lambda target: self.link(target).submit(request, self.timeout)
        )
        return version

    async def continue_round(self, addr: str, request: table_pb2.SeatRequest) -> None:
        """The seat is ready for the next round, at the table's owner (as ``submit``)."""
        await self._at_owner(
            addr, lambda target: self.link(target).continue_round(request, self.timeout)
        )

    async def leave(self, addr: str, request: table_pb2.SeatRequest) -> None:
        """The seat leaves its table for good, at the table's owner (as ``submit``)."""
        await self._at_owner(addr, lambda target: self.link(target).leave(request, self.timeout))

    async def _at_owner(self, addr: str, attempt: Callable[[str], Awaitable[T]]) -> tuple[T, str]:
        """``attempt`` at ``addr`` (``TABLE_ADDR`` when empty), then where ``reroute`` says."""
        target = addr or self.table_addr
        for _ in range(MAX_HOPS):
            try:
                return await attempt(target), target
            except ServiceError as err:
                next_target = reroute(err, target, self.table_addr)
                if next_target is None:
                    raise
                target = next_target
        raise ServiceError("unavailable", "no table replica answered")

    def subscribe(
        self,
        addr: str,
        request: table_pb2.SeatRequest,
        on_view: Callable[[game_pb2.TableView], None],
    ) -> LinkFeed:
        """The seat's views from the replica at ``addr`` (``TABLE_ADDR`` when empty)."""
        return self.link(addr).subscribe(request, on_view)

    def watch(
        self,
        addr: str,
        request: table_pb2.SummaryRequest,
        on_view: Callable[[game_pb2.TableView], None],
    ) -> LinkFeed:
        """A spectator's views from the replica at ``addr`` (``TABLE_ADDR`` when empty)."""
        return self.link(addr).watch(request, on_view)

    async def close(self) -> None:
        links = list(self._links.values())
        self._links.clear()
        await asyncio.gather(*(link.close() for link in links))
        channels = [
            c
            for c in (self._mm_channel, self._bot_channel, *self._channels.values())
            if c is not None
        ]
        self._channels.clear()
        self._stubs.clear()
        await asyncio.gather(*(c.close(grace=None) for c in channels), *self._closing)
