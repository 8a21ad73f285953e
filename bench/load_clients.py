"""The clients of ``bench/load.py``: the plan a worker process follows, its players, its tally.

A worker runs its share of the clients in one asyncio loop. Each ``Player`` is one
``rackem.client.Client`` that plays table after table (or, in echo mode, sends frames to
the echo server) and counts what happens inside the measured window into a ``Tally``,
which goes back to ``bench/load.py`` through ``multiprocessing``.

The window opens once every client is playing (or ``settle`` seconds after the ramp, if
some never get a seat): ``bench/load.py`` watches the count of seated clients the workers
share with it, and writes the opening time back for them to read (``Shared``).
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import resource
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.sharedctypes import Synchronized
from typing import Any

from rackem.client import FINAL, Client, ConnectionLost, ServerError, choose_move
from services.common import loop

__all__ = ["Plan", "Shared", "Tally", "Window", "raise_fd_limit", "share_with", "shares", "worker"]

MOVE_TIMEOUT_S = 30.0
VIEW_TIMEOUT_S = 120.0  # a human's turn comes back within clocks + bot delays
LAG_TICK_S = 0.05
WINDOW_POLL_S = 0.02
BUSY_CLOSE = 1013  # the gateway turned a newcomer away: back off
BACKOFF_MAX_S = 30.0
ECHO_FRAME = {"type": "move", "move": {"act": "draw", "from": "stock"}, "version": 7}
_SKIPPED = frozenset(
    {"stale_version", "not_your_turn", "illegal_move", "unavailable", "rate_limited"}
)
_UNREAD = frozenset({"rate_limited", "bad_frame"})


# -- the plan a worker follows and what it counts ----------------------------------------


@dataclass(frozen=True, slots=True)
class Plan:
    mode: str  # "game" or "echo"
    urls: tuple[str, ...]  # client i connects to urls[i % len(urls)] (its gateway)
    clients: int
    pace: float
    players: int
    humans: int  # per table
    level: str  # the bots at the table
    chooser: str  # how the clients choose their moves: a rackcore.bots level or random
    t0: float  # wall clock (time.time) of the first connection
    ramp: float  # the clients connect one after another over this many seconds
    duration: float  # of the measured window
    seed: int
    paired_echo: str = ""  # game mode: an echo URL to time one round trip before each move
    settle: float = 0.0  # after the ramp, wait at most this long for every client's seat
    cpus: tuple[int, ...] = ()  # the clients' cores (``--pin``); empty: any

    @property
    def earliest(self) -> float:
        """The window opens no sooner: every client has had its turn to connect."""
        return self.t0 + self.ramp

    @property
    def latest(self) -> float:
        """The window opens no later, whether or not every client is seated."""
        return self.earliest + self.settle


@dataclass(frozen=True, slots=True)
class Shared:
    """What the workers and ``bench/load.py`` share: clients seated, when the window opens."""

    seated: Synchronized[int]
    opens: Synchronized[float]  # wall clock; 0 until it is decided

    @classmethod
    def make(cls, context: Any) -> Shared:
        return cls(context.Value("i", 0), context.Value("d", 0.0))


class Window:
    """A worker's view of the measured window: unknown (never over) until it opens."""

    def __init__(self, plan: Plan, shared: Shared | None):
        self.plan = plan
        self.shared = shared
        self.start = math.inf
        self.end = math.inf
        self.opened = asyncio.Event()
        if shared is None:  # not shared: open as soon as the ramp is over
            self.open(plan.earliest)

    def open(self, at: float) -> None:
        self.start, self.end = at, at + self.plan.duration
        self.opened.set()

    def holds(self, t: float | None = None) -> bool:
        now = time.time() if t is None else t
        return self.start <= now < self.end

    def over(self) -> bool:
        return time.time() >= self.end

    def seated(self) -> None:
        """One more client is playing."""
        if self.shared is not None:
            with self.shared.seated.get_lock():
                self.shared.seated.value += 1

    async def watch(self) -> None:
        """Wait for ``bench/load.py`` to open the window."""
        while self.shared is not None and not self.opened.is_set():
            if self.shared.opens.value:
                self.open(self.shared.opens.value)
            else:
                await asyncio.sleep(WINDOW_POLL_S)


@dataclass(slots=True)
class Tally:
    latencies: list[float] = field(default_factory=list)  # seconds, moves sent in the window
    paired: list[float] = field(default_factory=list)  # echo round trips just before moves
    views: int = 0
    games: int = 0
    connected: int = 0  # open connections now
    at_start: int = 0  # open connections when the window opened
    before: list[float] = field(default_factory=list)  # seconds, moves sent before the window
    errors: Counter[str] = field(default_factory=Counter)
    lag: list[float] = field(default_factory=list)
    cpu: float = 0.0  # this worker's CPU seconds in the window

    def merge(self, other: Tally) -> None:
        self.latencies += other.latencies
        self.before += other.before
        self.paired += other.paired
        self.views += other.views
        self.games += other.games
        self.connected += other.connected
        self.at_start += other.at_start
        self.errors.update(other.errors)
        self.lag += other.lag
        self.cpu += other.cpu


async def _sleep_until(t: float) -> None:
    delay = t - time.time()
    if delay > 0:
        await asyncio.sleep(delay)


def _with_id(wanted: str) -> Callable[[dict[str, Any]], bool]:
    return lambda message: bool(message.get("id") == wanted)


# -- one client ---------------------------------------------------------------------------


class Player:
    """One protocol client of the plan; ``group`` shares room codes between a table's humans."""

    def __init__(
        self,
        plan: Plan,
        window: Window,
        index: int,
        tally: Tally,
        group: list[asyncio.Queue[str]],
    ):
        self.plan = plan
        self.window = window
        self.seated = False  # counted as playing (once)
        self.index = index
        self.tally = tally
        self.group = group  # one code queue per joiner of this client's table
        self.rnd = random.Random(plan.seed * 1_000_003 + index)
        self.name = f"Load{index % 100_000}"
        # Round robin over the gateways, as a balancer spreads connections: with 2 gateways
        # and 2 humans a table, its humans are on different gateways.
        self.url = plan.urls[index % len(plan.urls)]
        self.echo_client: Client | None = None

    async def think(self) -> None:
        if self.plan.pace > 0:
            await asyncio.sleep(self.rnd.expovariate(1.0 / self.plan.pace))

    async def run(self) -> None:
        plan = self.plan
        await _sleep_until(plan.t0 + plan.ramp * self.index / max(1, plan.clients))
        refusals = 0  # in a row: turned away while the server is busy, backing off
        while not self.window.over():
            client = Client(self.url, client="rackem-load/1")
            try:
                await client.connect(hello=plan.mode == "game")
                self.tally.connected += 1
                if plan.mode == "echo":
                    self._seated()
                try:
                    if plan.mode == "echo":
                        await self.echo(client)
                    else:
                        await self.games(client)
                finally:
                    self.tally.connected -= 1
                    await client.close()
                refusals = 0
            except ConnectionLost as exc:  # 1013: the gateway turned a newcomer away (busy)
                self.tally.errors[f"connection:closed {exc.code}"] += 1
                refusals = refusals + 1 if exc.code == BUSY_CLOSE else 0
                await self.back_off(refusals)
            except (OSError, TimeoutError) as exc:
                self.tally.errors[f"connection:{type(exc).__name__}"] += 1
                refusals = 0
                await self.back_off(refusals)
            except ServerError as err:  # ended this client's table (joining, most often)
                self.tally.errors[f"table:{err.code}"] += 1
                refusals = refusals + 1 if err.code == "busy" else 0
                await self.back_off(refusals)

    async def back_off(self, refusals: int) -> None:
        """1 s after a failure; after busy refusals in a row 1, 2, 4 … 30 s, with jitter
        (what a real client does, so refused newcomers do not storm a busy server)."""
        delay = min(BACKOFF_MAX_S, 2.0 ** max(refusals - 1, 0))
        await asyncio.sleep(delay * self.rnd.uniform(0.5, 1.0) if refusals else 1.0)

    def _seated(self) -> None:
        if not self.seated:
            self.seated = True
            self.window.seated()

    def _count(self, took: float, sent_at: float) -> None:
        if self.window.holds(sent_at):
            self.tally.latencies.append(took)
        elif sent_at < self.window.start:
            self.tally.before.append(took)

    async def echo(self, client: Client) -> None:
        while not self.window.over():
            await self.think()
            sent_at = time.time()
            took = await self.round_trip(client)
            self._count(took, sent_at)

    async def round_trip(self, echo: Client) -> float:
        """One frame to the echo server and back (through the same client code as a move)."""
        frame_id = f"e{self.rnd.getrandbits(32):08x}"
        sent = time.perf_counter()
        await echo.send(ECHO_FRAME | {"id": frame_id})
        await echo.wait_for("move", _with_id(frame_id), timeout=MOVE_TIMEOUT_S)
        return time.perf_counter() - sent

    async def games(self, client: Client) -> None:
        """Table after table until the run ends (with a paired echo connection, if planned)."""
        if self.plan.paired_echo:
            self.echo_client = Client(self.plan.paired_echo)
            await self.echo_client.connect(hello=False)
        try:
            while not self.window.over():
                await self.game(client)
        finally:
            if self.echo_client is not None:
                await self.echo_client.close()
                self.echo_client = None

    async def game(self, client: Client) -> None:
        """Sit at a new table and play it to the end."""
        plan = self.plan
        seen = client.views_seen
        rules = {"players": plan.players}
        member = self.index % plan.humans
        if plan.humans == 1:
            await client.create_table(self.name, rules, level=plan.level, start_now=True)
        elif member == 0:
            seated = await client.create_table(self.name, rules, level=plan.level)
            for joiner in self.group:
                joiner.put_nowait(seated["code"])
            if plan.humans < plan.players:
                await self._start_when_seated(client)
        else:
            code_queue = self.group[member - 1]
            code = await asyncio.wait_for(code_queue.get(), VIEW_TIMEOUT_S)
            await client.join(code, self.name)
        await self.play(client, seen)

    async def _start_when_seated(self, client: Client) -> None:
        def taken(message: dict[str, Any]) -> bool:
            return sum(bool(s["taken"]) for s in message["seats"]) >= self.plan.humans

        lobby = client.latest_lobby
        if lobby is None or not taken(lobby):
            await client.wait_for("lobby", taken, timeout=VIEW_TIMEOUT_S)
        await client.start()

    async def play(self, client: Client, seen: int) -> None:
        """Play the seat to the end of its match (the views after the ``seen``-th)."""
        plan = self.plan
        continued = -1
        while True:
            view = await client.next_view(seen, timeout=VIEW_TIMEOUT_S)
            self._seated()
            if self.window.holds():
                self.tally.views += client.views_seen - seen
            seen = client.views_seen
            if view["status"] in FINAL:
                if self.window.holds():
                    self.tally.games += 1
                return
            if self.window.over():
                return
            state = view["view"]
            if view["status"] == "round_over":
                if continued != state["round_no"]:
                    continued = state["round_no"]
                    await self.think()
                    await client.continue_round()
                continue
            if not view["legal"]:
                continue
            await self.think()
            if client.views_seen != seen:
                continue  # the table changed while thinking: look at it again
            if plan.chooser == "random":  # no rackcore on the client: cheap, plays badly
                move = self.rnd.choice(view["legal"])
            else:
                move = choose_move(view, level=plan.chooser, seed=self.index)
            if self.echo_client is not None:
                took = await self.round_trip(self.echo_client)
                if self.window.holds():
                    self.tally.paired.append(took)
            await self.submit(client, move, view["version"])

    async def submit(self, client: Client, move: dict[str, Any], version: int) -> None:
        move_id = f"v{version}-{self.rnd.getrandbits(32):08x}"
        sent = time.perf_counter()
        sent_at = time.time()
        await client.send({"type": "move", "move": move, "id": move_id, "version": version})
        while True:
            try:
                await client.wait_for("moved", _with_id(move_id), timeout=MOVE_TIMEOUT_S)
                break
            except ServerError as err:
                self.tally.errors[f"move:{err.code}"] += 1
                # rate_limited is refused before the frame is read: it names no move id
                ours = err.move_id == move_id or (err.move_id is None and err.code in _UNREAD)
                if not ours:
                    continue  # about something sent earlier: keep waiting
                if err.code in _SKIPPED:
                    return
                raise
        self._count(time.perf_counter() - sent, sent_at)


# -- a worker process -----------------------------------------------------------------------


def raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


async def _lag_monitor(window: Window, tally: Tally) -> None:
    """How late the loop wakes a sleeper: the clients' own delay, part of every latency."""
    while not window.over():
        before = time.perf_counter()
        await asyncio.sleep(LAG_TICK_S)
        if window.holds():
            tally.lag.append(time.perf_counter() - before - LAG_TICK_S)


async def _cpu_in_window(window: Window, tally: Tally) -> None:
    await window.opened.wait()
    await _sleep_until(window.start)
    tally.at_start = tally.connected
    before = time.process_time()
    await _sleep_until(window.end)
    tally.cpu = time.process_time() - before


async def _run_clients(plan: Plan, indices: list[int]) -> Tally:
    tally = Tally()
    window = Window(plan, _shared)
    queues: dict[int, list[asyncio.Queue[str]]] = {}
    players = []
    for i in indices:
        host = i - i % plan.humans
        group = queues.setdefault(host, [asyncio.Queue() for _ in range(plan.humans - 1)])
        players.append(Player(plan, window, i, tally, group))
    tasks = [asyncio.create_task(p.run()) for p in players]
    monitors = [
        asyncio.create_task(window.watch()),
        asyncio.create_task(_lag_monitor(window, tally)),
        asyncio.create_task(_cpu_in_window(window, tally)),
    ]
    await asyncio.gather(*monitors)
    # The window is over: stop every client and close its connection (bounded).
    for task in tasks:
        task.cancel()
    await asyncio.wait(tasks, timeout=30.0)
    return tally


_shared: Shared | None = None  # a worker's, from share_with


def share_with(shared: Shared) -> None:
    """The workers' pool initializer: shared values cross only at a process's start."""
    global _shared
    _shared = shared


def worker(plan: Plan, indices: list[int]) -> Tally:
    """One process's share of the clients (a multiprocessing target)."""
    raise_fd_limit()
    if plan.cpus:
        os.sched_setaffinity(0, plan.cpus)
    # uvloop, as the services run: the clients cost the machine less CPU; and the services'
    # GcPolicy, so the clients' own collection pauses stay out of the latencies they time.
    return loop.run(_run_clients(plan, indices))


def shares(plan: Plan, procs: int) -> list[list[int]]:
    """Clients split over ``procs`` workers, a table's humans always in one worker."""
    groups = [
        list(range(g, min(g + plan.humans, plan.clients)))
        for g in range(0, plan.clients, plan.humans)
    ]
    shares: list[list[int]] = [[] for _ in range(max(1, min(procs, len(groups))))]
    for n, group in enumerate(groups):
        shares[n % len(shares)] += group
    return shares
