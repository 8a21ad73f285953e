"""``rackem play`` driven through its stdin, against ``rackem up`` in a subprocess.

Each reply answers one prompt; a reply may hold several lines (keys typed one after
another before the next prompt).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager

import pytest

FAST_ENV = {**os.environ, "BOT_DELAY_MS": "0", "LOG_LEVEL": "WARNING"}
RACK_MARKS = "     5   10   15   20   25   30   35   40   45   50"


@asynccontextmanager
async def rackem(*args: str) -> AsyncIterator[asyncio.subprocess.Process]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "rackem.cli",
        *args,
        env=FAST_ENV,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """One ``rackem up`` for this module's tests: the URL it printed."""
    up = subprocess.Popen(
        [sys.executable, "-m", "rackem.cli", "up", "--port", "0", "--no-browser"],
        env=FAST_ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert up.stdout is not None
    try:
        line = up.stdout.readline()
        found = re.search(r"open (http://\S+)", line)
        assert found is not None, line
        yield found.group(1)
        up.send_signal(signal.SIGTERM)
        assert up.wait(timeout=10) == 0
    finally:
        if up.poll() is None:
            up.kill()
        up.wait()
        up.stdout.close()


Answers = Mapping[str, Sequence[str | asyncio.Future[str]]]


async def drive(
    proc: asyncio.subprocess.Process,
    answer: Answers,
    seen: Callable[[str], None] = lambda line: None,
) -> list[str]:
    """Answer each prompt tag with the next of its answers (awaited, if a future); every
    line printed (each also given to ``seen``), until the process exits."""
    assert proc.stdin is not None and proc.stdout is not None
    lines: list[str] = []
    counts: dict[str, int] = {}
    async with asyncio.timeout(60):
        while line := (await proc.stdout.readline()).decode():
            lines.append(line.rstrip("\n"))
            seen(lines[-1])
            tag = line.split(" ", 1)[0]
            if tag in answer:
                replies = answer[tag]
                reply = replies[min(counts.get(tag, 0), len(replies) - 1)]
                if isinstance(reply, asyncio.Future):
                    reply = await reply
                counts[tag] = counts.get(tag, 0) + 1
                proc.stdin.write(f"{reply}\n".encode())
                await proc.stdin.drain()
    return lines


async def test_a_person_plays_a_whole_match_against_the_computer(url: str) -> None:
    async with rackem("play", "--url", url, "--name", "Tess") as play:
        lines = await drive(
            play,
            {
                "[menu]": ["1", "q"],  # a new game against the computer; after it, quit
                "[players]": ["2"],
                "[level]": ["hard"],
                "[target]": ["50"],
                "[draw]": ["s"],  # always from the stock, so throwing away is allowed
                "[place]": ["t", "3", "t", "0"],  # throw, place in slot 15, throw, then slot 50
                "[continue]": ["c"],
            },
        )
        assert await play.wait() == 0
    assert RACK_MARKS in lines
    assert any(line.startswith("[place] holding ") for line in lines)
    over = [line for line in lines if line.startswith("match over")]
    assert len(over) == 1 and "wins" in over[0]
    log = [line for line in lines if line.startswith("match log: ")]
    assert len(log) == 1 and log[0].startswith(f"match log: {url}/match/t")


async def test_a_person_can_leave_a_match_and_quit(url: str) -> None:
    async with rackem("play", "--url", url) as play:
        lines = await drive(
            play,
            {
                "[name]": [""],  # the default name
                "[menu]": ["5", "1", "q"],  # a wrong choice first
                "[players]": ["3"],
                "[level]": ["medium"],
                "[target]": ["500"],
                "[draw]": ["q"],
                "[place]": ["q"],
            },
        )
        assert await play.wait() == 0
    assert "! choose 1, 2, 3, 4 or q" in lines
    assert "you left the table" in lines
    assert any("Player (you)" in line for line in lines)


async def test_play_says_so_when_no_server_answers() -> None:
    async with rackem("play", "--url", "http://127.0.0.1:1", "--name", "Tess") as play:
        assert play.stdout is not None
        out = (await asyncio.wait_for(play.stdout.read(), 30)).decode()
        assert await play.wait() == 1
    assert out.startswith("cannot reach ws://127.0.0.1:1/ws")


@pytest.mark.parametrize("keys", [["x", "r", "r0"]])
async def test_unknown_keys_are_refused_with_a_hint(url: str, keys: list[str]) -> None:
    async with rackem("play", "--url", url, "--name", "Tess") as play:
        lines = await drive(
            play,
            {
                "[menu]": ["1", "q"],
                "[players]": ["2"],
                "[level]": ["easy"],
                "[target]": ["500"],
                "[draw]": ["\n".join([*keys, "q"])],  # all at once: no new prompt between
            },
        )
        assert await play.wait() == 0
    assert lines.count("! unknown key (h for help)") == len(keys)


async def test_two_people_meet_at_a_private_table_by_its_code(url: str) -> None:
    code: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def note_code(line: str) -> None:
        found = re.match(r"\[lobby\] room code (\w{6})", line)
        if found and not code.done():
            code.set_result(found.group(1).lower())  # typed in lower case: any case works

    leave = {"[draw]": ["q"], "[place]": ["q"], "[continue]": ["q"]}
    async with (
        rackem("play", "--url", url, "--name", "Ann") as ann,
        rackem("play", "--url", url, "--name", "Bob") as bob,
    ):
        host = {"[menu]": ["3", "q"], "[players]": ["2"], "[level]": ["easy"]} | leave
        guest: Answers = {"[menu]": ["4", "q"], "[code]": [code], **leave}
        host_lines, guest_lines = await asyncio.gather(
            drive(ann, host, note_code), drive(bob, guest)
        )
    table = code.result().upper()
    for lines in (host_lines, guest_lines):
        assert f"table {table} · started · Ann, Bob" in lines
