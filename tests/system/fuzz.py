"""A protocol fuzz against a live ``rackem up``: frames a careless or hostile client sends,
over many connections, while protocol clients play whole matches on the same gateway.

Frames come from Hypothesis strategies built from the protocol's JSON schemas
(``services/gateway/schemas/``: every client message type, valid and mutated: fields
dropped, unknown or mistyped, integers at and past their bounds, long or odd strings),
plus byte-level garbage: random bytes, truncated and spliced JSON, binary frames, frames
over ``MAX_FRAME_BYTES`` and over ``WS_MAX_SIZE``, and text that is not UTF-8. A pool of
distinct frames is drawn with Hypothesis, then replayed in a seeded random order over
the connections (drawing each of a million frames would cost more than sending it).

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
import json
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
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import orjson
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from rackcore import verify
from rackem.client import Client, play_match
from services.gateway.protocol import CLIENT_TYPES, ERROR_CODES
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
MAX_FRAME = 4096  # MAX_FRAME_BYTES
WS_MAX = 65536  # WS_MAX_SIZE
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
# Close codes a fuzz connection may see: bad UTF-8, abuse (not here), too big, busy/slow.
CLOSES = {1007, 1008, 1009, 1013}
REPLACED = 4001  # a seated connection: a newer one resumed the same seat
INT_EDGES = (
    -(2**63) - 1,
    -(2**63),
    -(2**31) - 1,
    -(2**31),
    -1,
    0,
    1,
    2**31 - 1,
    2**31,
    2**53 + 1,
    2**63 - 1,
    2**63,
    2**64 - 1,
    2**64,
    10**30,
)


# -- Hypothesis strategies from the JSON schemas ---------------------------------------------


def _schemas() -> dict[str, dict[str, Any]]:
    folder = resources.files("services.gateway") / "schemas"
    return {
        kind: json.loads((folder / f"{kind}.json").read_text(encoding="utf-8"))
        for kind in CLIENT_TYPES
    }


JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from(INT_EDGES),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
ODD_TEXT = st.one_of(
    st.text(max_size=30),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=30),
    st.sampled_from(
        [
            "",
            " ",
            "Ann",
            "👨‍👩‍👧",
            "\u200d",
            "\u202eevil",
            "\ud800",  # a lone surrogate: a \uD800 escape in ASCII JSON, bad UTF-8 raw
            "a\udfffb",
            "A\x00",
            "x" * 21,
            "x" * 65,
            "ABCDEF",
            "abcdef",
            "0" * 32,
            "F" * 32,
            "stock",
            "discard",
            "draw",
            "place",
            "throw",
            "repair",
        ]
    ),
)


def schema_strategy(node: dict[str, Any], defs: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values that match one node of a schema (the subset ``services/gateway/schema.py`` reads)."""
    if "$ref" in node:
        return schema_strategy(
            {**defs[node["$ref"][8:]], **{k: v for k, v in node.items() if k != "$ref"}}, defs
        )
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    kind = node.get("type")
    kinds = [kind] if isinstance(kind, str) else list(kind or [])
    if not kinds:
        kinds = ["object"] if "properties" in node else ["integer"] if "minimum" in node else []
    if not kinds:
        return JSON_VALUES
    return st.one_of([_typed(node, name, defs) for name in kinds])


def _typed(node: dict[str, Any], kind: str, defs: dict[str, Any]) -> st.SearchStrategy[Any]:
    if kind == "object":
        props = node.get("properties", {})
        required = {
            k: schema_strategy(v, defs) for k, v in props.items() if k in node.get("required", ())
        }
        optional = {k: schema_strategy(v, defs) for k, v in props.items() if k not in required}
        fixed = st.fixed_dictionaries(required, optional=optional)
        if node.get("additionalProperties", True) is False:
            return fixed
        extra = st.dictionaries(st.text(max_size=10), JSON_VALUES, max_size=2)
        return st.builds(lambda a, b: {**b, **a}, fixed, extra)
    if kind == "string":
        if "pattern" in node:
            return st.from_regex(node["pattern"], fullmatch=True)
        low, high = node.get("minLength", 0), node.get("maxLength", 64)
        return st.text(min_size=low, max_size=high) | ODD_TEXT
    if kind == "integer":
        low, high = node.get("minimum"), node.get("maximum")
        return st.integers(low, high) | st.sampled_from(
            [x for x in INT_EDGES if _within(x, low, high)] or [0]
        )
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**63), 2**64 - 1)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        items = schema_strategy(node.get("items", {}), defs)
        return st.lists(items, min_size=node.get("minItems", 0), max_size=node.get("maxItems", 5))
    raise ValueError(f"no strategy for type {kind!r}")


def _within(x: int, low: int | None, high: int | None) -> bool:
    return (low is None or x >= low) and (high is None or x <= high)


@st.composite
def _mutated(draw: st.DrawFn, message: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    """A valid message, then one way of breaking it (or none)."""
    out = dict(draw(message))
    how = draw(st.sampled_from(["keep", "drop", "add", "retype", "edge", "nest"]))
    keys = sorted(k for k in out if k != "type")
    if how == "drop" and out:
        out.pop(draw(st.sampled_from(sorted(out))))
    elif how == "add":
        out[draw(st.sampled_from(["seat", "token", "x", "id", "version", "move", "", "type"]))] = (
            draw(JSON_VALUES)
        )
    elif how == "retype" and keys:
        out[draw(st.sampled_from(keys))] = draw(JSON_VALUES)
    elif how == "edge" and keys:
        out[draw(st.sampled_from(keys))] = draw(st.sampled_from(INT_EDGES))
    elif how == "nest" and isinstance(out.get("move"), dict):
        out["move"] = {
            **out["move"],
            draw(st.sampled_from(["slot", "from", "act", "seat", "go_out"])): draw(JSON_VALUES),
        }
    return out


def client_messages() -> st.SearchStrategy[dict[str, Any]]:
    """Every client message type from its schema, valid or broken in one way."""
    parts = []
    for doc in _schemas().values():
        valid = schema_strategy(doc, doc.get("$defs", {}))
        parts.append(valid | _mutated(valid))
    return st.one_of(parts)


# -- frames: messages encoded, and byte-level garbage ------------------------------------------


@dataclass(frozen=True, slots=True)
class Frame:
    """One WebSocket frame to send; ``closes``: the close code it must get (0: none)."""

    data: bytes
    binary: bool = False
    closes: int = 0


def _encode(message: Any, how: str) -> bytes:
    if how == "ascii":
        return json.dumps(
            message, ensure_ascii=True
        ).encode()  # \\uXXXX escapes, lone surrogates too
    try:
        return orjson.dumps(message)
    except TypeError:  # an integer past 64 bits: Python's json writes it
        return json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")


@st.composite
def frames(draw: st.DrawFn) -> Frame:
    """One frame: most are messages, the rest garbage of every kind."""
    kind = draw(
        st.sampled_from(
            ["message"] * 6
            + ["bytes", "truncated", "binary", "big", "huge", "bad_utf8", "deep", "json", "escape"]
        )
    )
    if kind == "message":
        data = _encode(draw(client_messages()), draw(st.sampled_from(["orjson", "ascii"])))
        return Frame(data, closes=_utf8_close(data))
    if kind == "bytes":
        data = draw(st.binary(max_size=200))
        return Frame(data, closes=_utf8_close(data))
    if kind == "truncated":
        data = _encode(draw(client_messages()), "orjson")
        cut = draw(st.integers(0, max(0, len(data) - 1)))
        return Frame(data[:cut], closes=_utf8_close(data[:cut]))
    if kind == "binary":
        return Frame(_encode(draw(client_messages()), "orjson"), binary=True)
    if kind == "big":  # read, then refused as over MAX_FRAME_BYTES
        pad = "é" * draw(st.integers(MAX_FRAME // 2, MAX_FRAME * 4))
        return Frame(orjson.dumps({"type": "ping", "pad": pad}))
    if kind == "huge":  # not read at all: 1009
        return Frame(b'{"type": "ping", "pad": "' + b"x" * (WS_MAX + 10) + b'"}', closes=1009)
    if kind == "bad_utf8":  # a lone surrogate, an overlong form, a stray byte: 1007
        bad = draw(
            st.sampled_from(
                [b"\xed\xa0\x80", b"\xc0\xaf", b"\xff", b"\xe2\x82", b"\xf4\x90\x80\x80"]
            )
        )
        good = _encode(draw(client_messages()), "orjson")
        at = draw(st.integers(0, len(good)))
        return Frame(good[:at] + bad + good[at:], closes=1007)
    if kind == "escape":  # a lone surrogate as a JSON escape: UTF-8 text, not a JSON string
        message = draw(client_messages())
        key = draw(st.sampled_from(sorted(message) or ["name"]))
        message[key] = draw(st.sampled_from(["\ud800", "a\udfffb", "\udbff\udbff"]))
        return Frame(_encode(message, "ascii"))
    if kind == "deep":
        depth = draw(st.integers(100, 3000))
        return Frame(b"[" * depth + b"]" * depth)
    return Frame(_encode(draw(JSON_VALUES), "orjson"))


def _utf8_close(data: bytes) -> int:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return 1007
    return 0


def frame_pool(size: int, seed: int = 0) -> list[Frame]:
    """``size`` frames drawn by Hypothesis (reproducible for a seed)."""
    pool: list[Frame] = []

    @hypothesis_seed(seed)
    @settings(
        max_examples=size,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(frames())
    def collect(frame: Frame) -> None:
        pool.append(frame)

    collect()
    return pool


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
            if message.get("type") == "pong" and message.get("t") == marker:
                break
    except TimeoutError:
        report.problem(f"no answer within 60 s (expected close {expect})")
    finally:
        if ws.close_code is not None:
            report.closes[ws.close_code] += 1
            if ws.close_code not in CLOSES or (expect and ws.close_code != expect):
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
    return _encode(message, "orjson")


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
