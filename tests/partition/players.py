"""Players that keep playing through faults, and remember every move the system acknowledged.

A ``Player`` plays one seat over WebSockets (``rackem.client.Client``) the way
docs/protocol.md asks of a client that resumes and retries:

- every move carries the ``version`` of the view it was chosen from and an ``id`` unique
  for the match (``<player>-<n>``); one refused ``unavailable``, ``rate_limited``,
  ``internal`` or ``not_seated``, or left unanswered, is sent again with the same id
  (at most once applied); ``stale_version``, ``not_your_turn`` and ``illegal_move``
  drop it (a newer view overtook it);
- an ``error`` without an ``id`` (the seat's stream lost) is answered with ``resume``;
- a connection that closes, or that answers no ``ping`` within ``PONG_S`` after
  ``QUIET_S`` without a message (a silent cut: nothing closes), is given up and the
  player connects to the next gateway (as a load balancer would send it), with a short
  backoff, says ``hello`` and resumes with its token;
- a round over is answered with ``continue`` once.

It records every ``moved`` answer (id, version, when), every move it sent (by id), and
every view's version with the time it arrived: what ``checker.py`` holds against the
final logs. Times are ``time.monotonic()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rackem.client import FINAL, Client, ConnectionLost, choose_move

__all__ = ["Ack", "Player", "play_pair"]

Message = dict[str, Any]
QUIET_S = 1.5  # no message this long: ping
PONG_S = 2.0  # no pong this long after: the connection is dead (a silent cut)
RETRY_S = 1.0  # a move left unanswered this long is sent again (same id)
BACKOFF_S = (0.1, 0.25, 0.5, 1.0)  # between reconnects (then 1 s each)
DROP = frozenset({"stale_version", "not_your_turn", "illegal_move", "match_over"})
RESEND = frozenset({"unavailable", "rate_limited", "internal", "busy"})


@dataclass(frozen=True)
class Ack:
    move_id: str
    version: int
    at: float


@dataclass
class Sent:
    move: Message
    version: int  # the view's it was chosen from
    at: float  # first sent
    last: float  # last sent
    tries: int = 1


@dataclass
class Player:
    name: str
    urls: list[str]
    home: int = 0  # the gateway it connects to first
    pace: float = 0.1  # seconds of thought before each move
    seed: int = 0
    gateway: int = field(init=False, default=0)
    client: Client | None = field(init=False, default=None)
    token: str | None = field(init=False, default=None)
    seat: int | None = field(init=False, default=None)
    table_id: str | None = field(init=False, default=None)
    code: str | None = field(init=False, default=None)
    final: Message | None = field(init=False, default=None)
    finished_at: float | None = field(init=False, default=None)
    acks: list[Ack] = field(init=False, default_factory=list)
    sent: dict[str, Sent] = field(init=False, default_factory=dict)
    views: list[tuple[float, int]] = field(init=False, default_factory=list)
    reconnects: int = field(init=False, default=0)
    errors: Counter[str] = field(init=False, default_factory=Counter)
    _ids: itertools.count[int] = field(init=False, default_factory=lambda: itertools.count(1))
    _pending: str | None = field(init=False, default=None)
    _continued: int = field(init=False, default=-1)
    _latest: Message | None = field(init=False, default=None)
    _acted_on: int = field(init=False, default=-1)  # the view version last moved from

    def __post_init__(self) -> None:
        self.gateway = self.home % len(self.urls)

    # -- connecting -------------------------------------------------------------------------

    async def _connect(self) -> Client:
        """A greeted connection: this gateway's, else the next ones', with a backoff."""
        for attempt in itertools.count():
            client = Client(self.urls[self.gateway], client="rackem-nemesis")
            try:
                await client.connect(timeout=3.0)
                return client
            except (OSError, TimeoutError, ConnectionLost, Exception) as exc:
                self.errors[f"connect:{type(exc).__name__}"] += 1
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(client.close(), 1)
                self.gateway = (self.gateway + 1) % len(self.urls)
                await asyncio.sleep(BACKOFF_S[min(attempt, len(BACKOFF_S) - 1)])
        raise AssertionError("unreachable")

    async def _drop(self, why: str) -> None:
        self.errors[f"drop:{why}"] += 1
        if self.client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.client.close(), 1)
        self.client = None
        self.gateway = (self.gateway + 1) % len(self.urls)
        self.reconnects += 1

    async def _request(self, message: Message, answer: str, timeout: float = 10.0) -> Message:
        """Send ``message`` and wait for ``answer`` (raising on an ``error`` without an id)."""
        assert self.client is not None
        await self.client.send(message)
        async with asyncio.timeout(timeout):
            while True:
                got = await self.client.recv(timeout=None)
                self._note(got)
                if got["type"] == answer:
                    return got
                if got["type"] == "error" and not got.get("id"):
                    raise _Refused(got["code"])

    async def seat_at(self, code: str | None, rules: Message, timeout: float = 60.0) -> str:
        """Create a private table (``code`` None) or join one; its code. Retried on
        refusals and lost connections (a create whose answer was lost makes another table:
        the first one waits alone and is abandoned, never played)."""
        async with asyncio.timeout(timeout):
            for attempt in itertools.count():
                if self.client is None or self.client.closed:
                    self.client = await self._connect()
                try:
                    if code is None:
                        message = {"type": "create_table", "name": self.name, "rules": rules}
                    else:
                        message = {"type": "join", "code": code, "name": self.name}
                    seated = await self._request(message, "seated")
                    return str(seated["code"])
                except (_Refused, ConnectionLost, TimeoutError) as exc:
                    self.errors[f"seat:{exc}"] += 1
                    await self._drop("seat")
                    await asyncio.sleep(BACKOFF_S[min(attempt, len(BACKOFF_S) - 1)])
        raise AssertionError("unreachable")

    async def _resume(self) -> None:
        """Connected (again) and following the seat: ``resume`` with the token until it is."""
        for attempt in itertools.count():
            if self.client is None or self.client.closed:
                self.client = await self._connect()
            try:
                await self._request({"type": "resume", "token": self.token}, "seated", 5.0)
                return
            except _Refused as exc:
                self.errors[f"resume:{exc}"] += 1
                if str(exc) == "bad_token":
                    raise
                if str(exc) == "already_seated":
                    return
            except (ConnectionLost, TimeoutError) as exc:
                self.errors[f"resume:{type(exc).__name__}"] += 1
                await self._drop("resume")
            await asyncio.sleep(BACKOFF_S[min(attempt, len(BACKOFF_S) - 1)])

    # -- playing -----------------------------------------------------------------------------

    def _note(self, message: Message) -> None:
        kind = message["type"]
        now = time.monotonic()
        if kind == "seated":
            self.token, self.seat = message["token"], message["seat"]
            self.table_id, self.code = message["table_id"], message["code"]
        elif kind == "view" and message.get("table_id") == self.table_id:
            self.views.append((now, int(message["version"])))
            if self._latest is None or message["version"] >= self._latest["version"]:
                self._latest = message
        elif kind == "moved":
            self.acks.append(Ack(message["id"], int(message["version"]), now))
            if message["id"] == self._pending:
                self._pending = None

    async def play(self, timeout: float = 600.0) -> Message:
        """Play the seat to the end of its match, through faults; the final view."""
        async with asyncio.timeout(timeout):
            quiet_since = time.monotonic()
            pinged: float | None = None
            while self.final is None:
                if self.client is None or self.client.closed:
                    if self.client is not None:
                        await self._drop("closed")
                    await self._resume()
                    quiet_since, pinged = time.monotonic(), None
                    await self._act(resent=True)
                    continue
                try:
                    message = await self.client.recv(timeout=0.25)
                except TimeoutError:
                    now = time.monotonic()
                    if pinged is not None and now - pinged > PONG_S:
                        await self._drop("silent")
                        continue
                    if pinged is None and now - quiet_since > QUIET_S:
                        pinged = now
                        await self._send({"type": "ping", "t": now})
                    await self._act()
                    continue
                except ConnectionLost:
                    continue
                quiet_since, pinged = time.monotonic(), None
                await self._handle(message)
            return self.final

    async def _send(self, message: Message) -> None:
        assert self.client is not None
        with contextlib.suppress(ConnectionLost):
            await self.client.send(message)

    async def _handle(self, message: Message) -> None:
        self._note(message)
        kind = message["type"]
        if kind == "error":
            code = message["code"]
            self.errors[code] += 1
            move_id = message.get("id")
            if not move_id:
                # The seat's stream was lost (or the connection lost its seat): follow it again.
                await self._resume()
                await self._act(resent=True)
                return
            if move_id == self._pending:
                if code in DROP:
                    self._pending = None
                elif code == "not_seated":
                    await self._resume()
                    await self._act(resent=True)
                    return
                elif code in RESEND:
                    await asyncio.sleep(0.1)
                    await self._act(resent=True)
                    return
                else:
                    raise AssertionError(f"{self.name}: move refused {code}: {message}")
        elif (
            kind == "view"
            and message.get("table_id") == self.table_id
            and message["status"] in FINAL
        ):
            self.final = message
            self.finished_at = time.monotonic()
            return
        await self._act()

    async def _act(self, resent: bool = False) -> None:
        """Do what the newest view asks: resend a pending move (``resent``, or left
        unanswered for ``RETRY_S``), continue a round over, or choose the next move."""
        view = self._latest
        if view is None or self.client is None or self.client.closed:
            return
        now = time.monotonic()
        if self._pending is not None:
            sent = self.sent[self._pending]
            if resent or now - sent.last >= RETRY_S:
                sent.last, sent.tries = now, sent.tries + 1
                await self._send(self._move_message(self._pending, sent))
            return
        if view["status"] in FINAL:
            return
        state = view["view"]
        if view["status"] == "round_over":
            if self._continued != state["round_no"]:
                self._continued = state["round_no"]
                await self._send({"type": "continue"})
            return
        if not view["legal"] or view["version"] == self._acted_on:
            return
        if self.pace:
            await asyncio.sleep(self.pace * random.uniform(0.5, 1.5))
            view = self._latest
            assert view is not None
            if not view["legal"] or view["status"] != "playing" or self._pending is not None:
                return
        self._acted_on = view["version"]
        move_id = f"{self.name}-{next(self._ids)}"
        sent = Sent(choose_move(view, "easy", self.seed), view["version"], now, time.monotonic())
        self.sent[move_id] = sent
        self._pending = move_id
        await self._send(self._move_message(move_id, sent))

    @staticmethod
    def _move_message(move_id: str, sent: Sent) -> Message:
        return {"type": "move", "move": sent.move, "id": move_id, "version": sent.version}

    async def close(self) -> None:
        if self.client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.client.close(), 2)


class _Refused(Exception):
    """An ``error`` without an id answering a request (its code)."""


async def play_pair(
    first: Player, second: Player, rules: Message, timeout: float = 600.0
) -> tuple[Message, Message]:
    """Seat two players at a private table of their own (``first`` creates it, ``second``
    joins: it starts), then play it to the end."""
    code = await first.seat_at(None, rules)
    await second.seat_at(code, rules)
    finals = await asyncio.gather(first.play(timeout), second.play(timeout))
    return finals[0], finals[1]
