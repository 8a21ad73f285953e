"""A protocol fuzz against a live ``rackem up``: frames a careless or hostile client sends,
over many connections, while protocol clients play whole matches on the same gateway.

The frames are ``tests/system/fuzz_frames.py``'s: Hypothesis strategies built from the
protocol's JSON schemas plus byte-level garbage. A pool of distinct frames is drawn with
Hypothesis, then replayed here in a seeded random order over the connections (drawing
each of a million frames would cost more than sending it).

Each fuzz connection (from 127.0.0.2, so that the per-address game limit holds the
fuzz's new games apart from the players') says hello (mostly), pipelines a batch of
frames, ends with a ping to know every frame was answered, and sometimes with a frame
that must close it (1007 for bad UTF-8, 1009 for a frame too big to read). Every answer
is checked: JSON, and no error ``internal``; every close has an expected code. Beside
them, players (``rackem.client``) play whole matches against bots, each verified from
its log, and ``/healthz`` is asked every quarter second.

``tests/system/test_fuzz.py`` runs it in CI (100,000 frames); ``bench/fuzz_bench.py``
runs it longer (1,000,000) and prints the figures.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson

from rackcore import verify
from rackem.client import Client, play_match
from services.gateway.protocol import ERROR_CODES
from tests.system.fuzz_frames import (
    CLOSES,
    Frame,
    client_messages,
    encode,
    frame_pool,
    schema_strategy,
)
from tests.system.raw_ws import RawWebSocket

__all__ = [
    "FUZZ_ENV",
    "Frame",
    "Report",
    "client_messages",
    "frame_pool",
    "rackem_up",
    "run_fuzz",
    "schema_strategy",
]

ROOT = Path(__file__).resolve().parents[2]
FUZZ_ADDRESS = "127.0.0.2"  # the fuzz's own client address (any 127/8 reaches loopback)
# The server under fuzz: every frame is parsed (no rate limit, no abuse close), bots
# answer at once, and the per-address game limit stays on (the fuzz's address uses it up).
FUZZ_ENV = {
    "LOG_LEVEL": "WARNING",
    "BOT_DELAY_MS": "0",
    "MSG_RATE": "1000000",
    "MSG_BURST": "1000000",
    "ABUSE_LIMIT": "1000000000",
    "GAMES_PER_IP": "40",
}
REPLACED = 4001  # a seated connection: a newer one resumed the same seat

# -- the run ---------------------------------------------------------------------------------


@dataclass
class Report:
    frames: int = 0
    connections: int = 0
    answers: int = 0
    codes: Counter[str] = field(default_factory=Counter)
    closes: Counter[int] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    matches: int = 0
    verified: int = 0
    health_checks: int = 0
    health_max_s: float = 0.0
    seconds: float = 0.0
    pool: int = 0
    seated_connections: int = 0
    accepted_moves: int = 0
    tokens: list[str] = field(default_factory=list)  # seats the fuzz holds, to resume

    def problem(self, text: str) -> None:
        if len(self.problems) < 50:
            self.problems.append(text)


@contextlib.contextmanager
def rackem_up(
    env: dict[str, str] | None = None,
) -> Iterator[tuple[subprocess.Popen[str], str, Path]]:
    """``rackem up --port 0`` as a subprocess with ``FUZZ_ENV``; the process, its URL and the
    file its log (stderr) goes to."""
    with tempfile.TemporaryDirectory(prefix="rackem-fuzz-") as folder:
        log = Path(folder) / "stderr.log"
        with log.open("w") as errors:
            proc = subprocess.Popen(
                [sys.executable, "-m", "rackem.cli", "up", "--port", "0", "--no-browser"],
                cwd=ROOT,
                env={**os.environ, **FUZZ_ENV, **(env or {})},
                stdout=subprocess.PIPE,
                stderr=errors,
                stdin=subprocess.DEVNULL,
                text=True,
            )
            try:
                assert proc.stdout is not None
                line = proc.stdout.readline()
                found = re.search(r"open (http://\S+)", line)
                if found is None:
                    raise RuntimeError(
                        f"rackem up did not start: {line!r} {log.read_text()[-2000:]}"
                    )
                yield proc, found.group(1), log
            finally:
                if proc.poll() is None:
                    proc.terminate()
                    try:
                        proc.wait(15)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                proc.wait()
                assert proc.stdout is not None
                proc.stdout.close()


async def _fuzz_connection(port: int, batch: list[Frame], hello: bool, report: Report) -> None:
    ws = await RawWebSocket.open(port, local_addr=(FUZZ_ADDRESS, 0))
    report.connections += 1
    marker = random.random()
    expect = next((f.closes for f in batch if f.closes), 0)
    seated = False  # a seat taken here may be resumed by another connection (REPLACED)
    if expect:  # everything up to the frame that closes; that one last
        batch = [f for f in batch if not f.closes] + [next(f for f in batch if f.closes)]
    try:
        if hello:
            ws.send_text(b'{"type": "hello", "version": 1, "client": "fuzz"}')
        for i, frame in enumerate(batch):
            if frame.binary:
                ws.send_binary(frame.data)
            else:
                ws.send_text(frame.data)
            if i % 32 == 31:
                await ws.flush()
        report.frames += len(batch) + hello
        if not expect:
            ws.send_text(orjson.dumps({"type": "ping", "t": marker}))
        await ws.flush()
        while True:
            text = await ws.recv(timeout=60)
            if text is None:
                break
            message = _check(text, report)
            seated = seated or message.get("type") == "seated"
            if message.get("type") == "pong" and message.get("t") == marker:
                break
    except TimeoutError:
        report.problem(f"no answer within 60 s (expected close {expect})")
    finally:
        if ws.close_code is not None:
            report.closes[ws.close_code] += 1
            if seated and ws.close_code == REPLACED:
                pass  # its seat was resumed by a newer connection (a token it was given)
            elif ws.close_code not in CLOSES or (expect and ws.close_code != expect):
                report.problem(
                    f"closed with {ws.close_code} {ws.close_reason!r}, expected {expect}"
                )
        elif expect:
            report.problem(f"not closed, expected {expect}")
        await ws.aclose()


def _check(text: str, report: Report) -> dict[str, Any]:
    """One answer: JSON, and no ``internal`` error; seats handed out are kept to resume."""
    report.answers += 1
    message: dict[str, Any] = orjson.loads(text)
    kind = message.get("type")
    if kind == "error":
        code = str(message.get("code"))
        report.codes[code] += 1
        if code == "internal" or code not in ERROR_CODES:
            report.problem(f"answer {message!r}")
    elif kind == "seated" and len(report.tokens) < 200:
        report.tokens.append(message["token"])
    elif kind == "moved":
        report.accepted_moves += 1
    return message


_LEAVING = frozenset({"leave", "rematch"})


async def _seated_connection(
    port: int, token: str, batch: list[Frame], rng: random.Random, report: Report
) -> None:
    """Resume a seat the fuzz holds, then fuzz its live table in rounds of 16 frames, each
    round's moves (now and then) with the newest view's version or one of its legal moves."""
    ws = await RawWebSocket.open(port, local_addr=(FUZZ_ADDRESS, 0))
    report.connections += 1
    report.seated_connections += 1
    view: dict[str, Any] = {}
    try:
        ws.send_text(b'{"type": "hello", "version": 1}')
        ws.send_text(orjson.dumps({"type": "resume", "token": token}))
        await ws.flush()
        report.frames += 2
        for start in range(0, len(batch), 16):
            if not ws.is_open:
                return
            for frame in batch[start : start + 16]:
                if frame.binary:
                    ws.send_binary(frame.data)
                else:
                    ws.send_text(_at_table(frame, view, rng))
            marker = rng.random()
            ws.send_text(orjson.dumps({"type": "ping", "t": marker}))
            await ws.flush()
            report.frames += len(batch[start : start + 16]) + 1
            while True:
                text = await ws.recv(timeout=60)
                if text is None:
                    return
                message = _check(text, report)
                if message.get("type") == "view":
                    view = message
                elif message.get("type") == "pong" and message.get("t") == marker:
                    break
    except TimeoutError:
        report.problem("a seated fuzz connection got no answer within 60 s")
    finally:
        if ws.close_code is not None:
            report.closes[ws.close_code] += 1
            if ws.close_code not in CLOSES | {REPLACED}:
                report.problem(f"a seated connection closed with {ws.close_code}")
        await ws.aclose()


def _at_table(frame: Frame, view: dict[str, Any], rng: random.Random) -> bytes:
    """``frame``, or a move made to fit the table now (its version, a legal move)."""
    if not view or b'"move"' not in frame.data:
        return frame.data
    try:
        message = orjson.loads(frame.data)
    except orjson.JSONDecodeError:
        return frame.data
    if not isinstance(message, dict) or message.get("type") != "move":
        return frame.data
    if rng.random() < 0.7:
        message["version"] = view.get("version", 0)
    if view.get("legal") and rng.random() < 0.5:
        message["move"] = rng.choice(view["legal"])
    return encode(message, "orjson")


async def _fuzzer(
    port: int, pool: list[Frame], frames: int, rng: random.Random, report: Report
) -> None:
    while report.frames < frames:
        size = rng.choice((1, 8, 64, 256, 1024, 2048))
        batch = [rng.choice(pool) for _ in range(size)]
        try:
            if report.tokens and rng.random() < 0.3:
                table = [f for f in batch if not f.closes and not _leaves(f)][:256]
                await _seated_connection(port, rng.choice(report.tokens), table, rng, report)
            else:
                await _fuzz_connection(port, batch, rng.random() < 0.95, report)
        except (OSError, ValueError, RuntimeError) as exc:  # the gateway hung up on us
            report.problem(f"a fuzz connection failed: {exc!r}")


def _leaves(frame: Frame) -> bool:
    return any(b'"%s"' % kind.encode() in frame.data for kind in _LEAVING)


async def _fuzz_seats(port: int, count: int, report: Report) -> None:
    """``count`` seats at started tables (against bots) for the fuzz's own address, for the
    seated fuzz connections to resume."""
    for i in range(count):
        ws = await RawWebSocket.open(port, local_addr=(FUZZ_ADDRESS, 0))
        rules = {"players": 2 + i % 3, "target": 10000, "turn_cap": 1000}
        ws.send_text(b'{"type": "hello", "version": 1}')
        ws.send_text(
            orjson.dumps(
                {"type": "create_table", "name": f"Fuzz {i}", "rules": rules, "start_now": True}
            )
        )
        await ws.flush()
        report.frames += 2
        while (text := await ws.recv(timeout=30)) is not None:
            if _check(text, report).get("type") == "view":
                break
        await ws.aclose()


async def _player(url: str, i: int, fuzzing: asyncio.Event, report: Report) -> None:
    """Whole matches against bots, one after another while the fuzz runs, each verified."""
    match = 0
    while fuzzing.is_set() or match == 0:
        await _match(url, i, match, report)
        match += 1


async def _match(url: str, i: int, match: int, report: Report) -> None:
    # Each match from an address of its own: the per-address game limit is the fuzz's.
    async with Client(url, local_addr=(f"127.1.{i}.{match % 250 + 1}", 0)) as client:
        seated = await client.create_table(
            f"Player {i}",
            {"players": 2 + (i + match) % 3, "target": 50},
            level="easy",
            start_now=True,
        )
        report.matches += 1
        final = await play_match(client, timeout=600)
    if final["status"] != "finished":
        report.problem(
            f"match {seated['table_id']} ended {final['status']} {final['ended_reason']}"
        )
        return
    async with httpx.AsyncClient(trust_env=False, timeout=30) as http:
        log = (await http.get(f"{url}/match/{seated['table_id']}.json")).json()
    if not verify(log)["valid"]:
        report.problem(f"match {seated['table_id']} does not verify")
        return
    report.verified += 1


async def _health(url: str, done: asyncio.Event, report: Report) -> None:
    async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
        while not done.is_set():
            started = time.perf_counter()
            try:
                answer = await http.get(f"{url}/healthz")
                if answer.status_code != 200:
                    report.problem(f"/healthz answered {answer.status_code}")
            except httpx.HTTPError as exc:
                report.problem(f"/healthz failed: {exc!r}")
            report.health_checks += 1
            report.health_max_s = max(report.health_max_s, time.perf_counter() - started)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), 0.25)


async def run_fuzz(
    url: str, frames: int, *, fuzzers: int = 8, players: int = 4, pool: int = 3000, seed: int = 0
) -> Report:
    """Fuzz the gateway at ``url`` (``http://host:port``) with ``frames`` frames from
    ``fuzzers`` concurrent connection loops while ``players`` matches are played."""
    report = Report()
    started = time.perf_counter()
    drawn = frame_pool(pool, seed)
    report.pool = len(drawn)
    port = int(url.rsplit(":", 1)[1])
    done = asyncio.Event()
    health = asyncio.create_task(_health(url, done, report))
    await _fuzz_seats(port, 8, report)
    fuzzing = asyncio.Event()
    fuzzing.set()
    matches = [asyncio.create_task(_player(url, i, fuzzing, report)) for i in range(players)]
    rngs = [random.Random(seed * 1000 + i) for i in range(fuzzers)]
    try:
        await asyncio.gather(*(_fuzzer(port, drawn, frames, rng, report) for rng in rngs))
        fuzzing.clear()  # the players finish the match they are in
        for outcome in await asyncio.gather(*matches, return_exceptions=True):
            if isinstance(outcome, BaseException):
                report.problem(f"a player failed: {outcome!r}")
    finally:
        done.set()
        await health
        for task in matches:
            task.cancel()
    report.seconds = time.perf_counter() - started
    return report


def log_problems(log: Path) -> list[str]:
    """Lines of the server's log that hold a traceback or an unexpected error."""
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    bad = (
        "Traceback",
        "unexpected_error",
        "Exception",
        "Error:",
        '"level": "ERROR"',
        '"level":"ERROR"',
    )
    return [line[:300] for line in lines if any(word in line for word in bad)]
