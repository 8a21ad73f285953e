"""An async client of the rackem WebSocket protocol (docs/protocol.md).

Used by the tests, ``rackem play`` and the load benchmark::

    async with Client("ws://127.0.0.1:8000/ws") as client:
        await client.create_table("Ann", level="easy", start_now=True)
        final = await play_match(client)

Every server message goes, in order, to one inbox that ``recv``, ``wait_for`` and
``async for message in client`` read; ``latest_view``/``latest_lobby`` always hold the
newest of each, whether or not it has been read.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

__all__ = [
    "FINAL",
    "Client",
    "ConnectionLost",
    "ServerError",
    "choose_move",
    "play_match",
    "ws_url",
]

FINAL = frozenset({"finished", "ended"})
Message = dict[str, Any]
_LOCAL = ("localhost", "127.0.0.1", "::1")


class ServerError(Exception):
    """An ``error`` message from the server."""

    def __init__(self, code: str, message: str, move_id: str | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.move_id = move_id


class ConnectionLost(Exception):
    """The connection closed; ``code`` is the WebSocket close code (None if none was sent)."""

    def __init__(self, code: int | None) -> None:
        super().__init__(f"connection closed ({code})")
        self.code = code


def ws_url(url: str) -> str:
    """``http(s)://host[:port]`` or ``ws(s)://…`` as the WebSocket URL (path ``/ws`` if none)."""
    parts = urlsplit(url if "://" in url else f"ws://{url}")
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    path = parts.path if parts.path not in ("", "/") else "/ws"
    return urlunsplit((scheme, parts.netloc, path, parts.query, ""))


class Client:
    """One connection. ``async with Client(url)`` connects and says hello."""

    def __init__(
        self,
        url: str,
        *,
        origin: str | None = None,
        client: str = "rackem-client",
        local_addr: tuple[str, int] | None = None,
    ) -> None:
        self.url = ws_url(url)
        self.origin = origin
        self.local_addr = local_addr  # the socket's own address (load and fuzz tests)
        self.client_name = client
        self.welcome: Message | None = None
        self.token: str | None = None
        self.seat: int | None = None
        self.table_id: str | None = None
        self.code: str | None = None
        self.latest_view: Message | None = None
        self.latest_lobby: Message | None = None
        self.latest_offer: Message | None = None  # the newest ``rematch_offer``
        self.views_seen = 0
        self.close_code: int | None = None
        self._ws: ClientConnection | None = None
        self._inbox: asyncio.Queue[Message | None] = asyncio.Queue()
        self._changed = asyncio.Condition()
        self._reader: asyncio.Task[None] | None = None
        self._ids = itertools.count(1)

    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- the connection ------------------------------------------------------------------

    async def connect(self, hello: bool = True, timeout: float = 10.0) -> Message | None:
        """Open the socket and (by default) say hello; the ``welcome`` message."""
        host = urlsplit(self.url).hostname or ""
        extra: dict[str, Any] = {"local_addr": self.local_addr} if self.local_addr else {}
        self._ws = await connect(
            self.url,
            origin=self.origin,  # type: ignore[arg-type]
            proxy=None if host in _LOCAL or host.startswith("127.") else True,
            max_size=2**20,
            open_timeout=timeout,
            # As a browser: no pings of its own; it answers the gateway's (every 20 s).
            ping_interval=None,
            **extra,
        )
        self._reader = asyncio.create_task(self._read())
        if not hello:
            return None
        await self.send({"type": "hello", "version": 1, "client": self.client_name})
        self.welcome = await self.wait_for("welcome", timeout=timeout)
        return self.welcome

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader

    async def _read(self) -> None:
        assert self._ws is not None
        try:
            async for frame in self._ws:
                message: Message = orjson.loads(frame)
                await self._note(message)
                self._inbox.put_nowait(message)
        except ConnectionClosed:
            pass
        finally:
            self.close_code = self._ws.close_code
            self._inbox.put_nowait(None)
            async with self._changed:
                self._changed.notify_all()

    async def _note(self, message: Message) -> None:
        kind = message.get("type")
        if kind == "seated":
            self.token, self.seat = message["token"], message["seat"]
            self.table_id, self.code = message["table_id"], message["code"]
        elif kind == "watching":
            self.table_id, self.code = message["table_id"], message["code"]
        elif kind == "lobby":
            self.latest_lobby = message
        elif kind == "rematch_offer":
            self.latest_offer = message
        elif kind == "view":
            self.latest_view = message
            self.views_seen += 1
            async with self._changed:
                self._changed.notify_all()
        elif kind == "left":
            self.seat = None

    @property
    def closed(self) -> bool:
        return self._reader is None or self._reader.done()

    async def send(self, message: Message) -> None:
        """Send one message as it is (no checks: tests send bad ones on purpose)."""
        if self._ws is None:
            raise ConnectionLost(None)
        try:
            await self._ws.send(orjson.dumps(message).decode())
        except ConnectionClosed:
            raise ConnectionLost(self._ws.close_code) from None

    async def send_raw(self, frame: str | bytes) -> None:
        assert self._ws is not None
        await self._ws.send(frame)

    async def recv(self, timeout: float | None = 30.0) -> Message:
        """The next server message; ``ConnectionLost`` once the connection is closed."""
        message = await asyncio.wait_for(self._inbox.get(), timeout)
        if message is None:
            self._inbox.put_nowait(None)  # stay closed for every later reader
            raise ConnectionLost(self.close_code)
        return message

    def __aiter__(self) -> AsyncIterator[Message]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Message]:
        while True:
            try:
                yield await self.recv(timeout=None)
            except ConnectionLost:
                return

    async def wait_for(
        self,
        kind: str,
        predicate: Callable[[Message], bool] | None = None,
        *,
        timeout: float = 30.0,
        errors: bool = True,
    ) -> Message:
        """Read messages until one of ``kind`` (matching ``predicate``); the others are dropped.

        With ``errors`` (the default) an ``error`` message read on the way raises ``ServerError``.
        """
        async with asyncio.timeout(timeout):
            while True:
                message = await self.recv(timeout=None)
                if errors and message["type"] == "error" and kind != "error":
                    raise ServerError(message["code"], message["message"], message.get("id"))
                if message["type"] == kind and (predicate is None or predicate(message)):
                    return message

    async def next_view(self, after: int, timeout: float = 30.0) -> Message:
        """The newest view once more than ``after`` views have arrived (see ``views_seen``)."""
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(lambda: self.views_seen > after or self.closed)
        if self.views_seen <= after or self.latest_view is None:
            raise ConnectionLost(self.close_code)
        return self.latest_view

    async def wait_view(
        self, predicate: Callable[[Message], bool], timeout: float = 30.0
    ) -> Message:
        """The newest view, once it satisfies ``predicate`` (the current one counts)."""

        def ready() -> bool:
            view = self.latest_view
            return (view is not None and predicate(view)) or self.closed

        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(ready)
        view = self.latest_view
        if view is None or not predicate(view):
            raise ConnectionLost(self.close_code)
        return view

    # -- commands ------------------------------------------------------------------------

    async def quick_match(self, name: str, players: int = 2) -> Message:
        await self.send({"type": "quick_match", "name": name, "players": players})
        return await self.wait_for("seated")

    async def create_table(
        self,
        name: str,
        rules: dict[str, Any] | None = None,
        level: str | None = None,
        start_now: bool = False,
        spectators: str | None = None,
    ) -> Message:
        message: Message = {"type": "create_table", "name": name, "start_now": start_now}
        if rules is not None:
            message["rules"] = rules
        if spectators is not None:
            message["spectators"] = spectators
        if level is not None:
            message["level"] = level
        await self.send(message)
        return await self.wait_for("seated")

    async def join(self, code: str, name: str) -> Message:
        await self.send({"type": "join", "code": code, "name": name})
        return await self.wait_for("seated")

    async def watch(self, code: str) -> Message:
        """Watch the table with room code ``code`` as a spectator; the ``watching`` message."""
        await self.send({"type": "watch", "code": code})
        return await self.wait_for("watching")

    async def rematch(self) -> Message:
        """Ask for (or accept) a rematch of the match just finished; its ``seated``."""
        await self.send({"type": "rematch"})
        return await self.wait_for("seated")

    async def resume(self, token: str | None = None) -> Message:
        await self.send({"type": "resume", "token": token or self.token})
        return await self.wait_for("seated")

    async def start(self) -> None:
        await self.send({"type": "start"})

    async def move(
        self, move: Message, *, move_id: str | None = None, version: int | None = None
    ) -> Message:
        """Submit a move and wait for its ``moved`` (or raise its ``ServerError``)."""
        move_id = move_id or f"m{next(self._ids)}"
        message: Message = {"type": "move", "move": move, "id": move_id}
        if version is not None:
            message["version"] = version
        await self.send(message)
        return await self.wait_for("moved", lambda m: m["id"] == move_id)

    async def continue_round(self) -> None:
        await self.send({"type": "continue"})

    async def leave(self) -> Message:
        await self.send({"type": "leave"})
        return await self.wait_for("left")

    async def ping(self, t: float | None = None) -> Message:
        await self.send({"type": "ping"} if t is None else {"type": "ping", "t": t})
        return await self.wait_for("pong")


Chooser = Callable[[Message], Message]


def choose_move(view: Message, level: str = "medium", seed: int = 0) -> Message:
    """The move a computer player of ``level`` makes from a ``view`` message (rackcore.bots)."""
    from rackcore import View
    from rackcore.bots import choose

    move = choose(View.from_dict(view["view"]), level=level, seed=seed).to_dict()
    del move["seat"]
    return move


async def play_match(
    client: Client,
    choose: Chooser = choose_move,
    *,
    timeout: float = 120.0,
    min_interval: float = 0.0,
) -> Message:
    """Play the client's seat to the end of its match; the final view.

    Moves follow the newest view (always with its ``version``); a move overtaken by a
    newer view (``stale_version``, ``not_your_turn``) is dropped, one refused as
    ``unavailable`` is retried with the same id, and each round over is answered with
    ``continue`` once. ``min_interval`` spaces the client's messages (seconds), to stay
    within a gateway's per-connection message rate.
    """
    seen = 0
    continued_round = 0
    loop = asyncio.get_running_loop()
    last_sent = -min_interval
    async with asyncio.timeout(timeout):
        while True:
            view = await client.next_view(seen, timeout=timeout)
            seen = client.views_seen
            if view["status"] in FINAL:
                return view
            state = view["view"]
            acting = view["status"] == "round_over" and continued_round != state["round_no"]
            if not acting and not view["legal"]:
                continue
            wait = last_sent + min_interval - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            last_sent = loop.time()
            if acting:
                continued_round = state["round_no"]
                await client.continue_round()
            else:
                await _move(client, choose(view), view["version"])


async def _move(client: Client, move: Message, version: int, tries: int = 20) -> None:
    """One move: retried (same id, so at most once) while the table is unavailable; dropped
    when a newer view overtook it."""
    move_id = f"p{version}-{next(client._ids)}"
    for attempt in range(tries):
        try:
            await client.move(move, move_id=move_id, version=version)
            return
        except ServerError as err:
            if err.code in ("stale_version", "not_your_turn", "illegal_move"):
                return
            if err.code != "unavailable" or attempt == tries - 1:
                raise
        await asyncio.sleep(0.1 * (attempt + 1))
