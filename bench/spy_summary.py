"""Where a server process spends its CPU: a summary of a ``py-spy record --format raw`` file.

    python3 bench/spy_summary.py PROFILE.txt [--top 25]

``bench/load.py --profile PREFIX`` writes such files (one per server process). Prints
the share of samples by part of the system (the first rule of ``PARTS`` that matches
a sample's stack), then the functions with the most samples of their own and the most
samples in all (their callees included). py-spy sees Python frames only unless run
with ``--native``: time in C extensions (gRPC's Cython core, protobuf, sockets) shows
as their Python caller, often ``Handle._run`` of the asyncio loop.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

# (part, markers): a sample belongs to the first part one of whose markers is in its stack.
PARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("idle: waiting in epoll", ("epoll_wait", "EpollSelector.select")),
    ("garbage collection", ("gc_collect",)),
    ("bot service: ChooseMove (rackcore.bots)", ("BotServicer.ChooseMove",)),
    ("table: driver (clocks, bot moves)", ("Tables._run", "services/table/driver.py")),
    ("table: moves", ("TableService.submit", "LinkServer._submit")),
    ("table: views out (subscriptions)", ("LinkServer._follow", "LinkServer._flow")),
    ("table: link reads and writes (gRPC)", ("services/table/link.py",)),
    ("table: other requests", ("services/table/service.py", "services/table/servicer.py")),
    ("gateway: writing frames (send loop)", ("Connection._send_loop",)),
    ("gateway: table views → JSON (follow)", ("services/gateway/follow.py",)),
    ("gateway: frames in (parse, validate, forward)", ("Connection._receive_loop",)),
    ("gateway: link reads and writes (gRPC)", ("services/gateway/table_client.py",)),
    ("uvicorn/websockets: reading, handshakes", ("uvicorn/protocols",)),
    ("matchmaker", ("services/matchmaker/",)),
    ("gRPC machinery (Cython core, poller thread)", ("grpc/", "cygrpc", "Thread.run")),
    ("asyncio sockets", ("selector_events.py",)),
    ("asyncio loop (callbacks: mostly gRPC's C code)", ("_run_once", "Handle._run")),
)
# Under uvloop the loop is C code below asyncio.Runner.run: its own samples are the loop's
# work (and any waiting py-spy saw as active), not a Python function's.
UVLOOP = "Runner.run ("
_FRAME = re.compile(r"(?P<fn>.*) \((?P<file>[^:()]*)(?::\d+)?\)$")


def _short(frame: str) -> str:
    match = _FRAME.match(frame)
    if match is None:
        return frame
    path = re.sub(r".*site-packages/|.*/lib/python3\.\d+/", "", match["file"])
    path = re.sub(r".*/(rackcore|services|rackem|bench)/", r"\1/", path)
    return f"{match['fn']} ({path})"


def read(path: Path) -> list[tuple[list[str], int]]:
    samples = []
    for line in path.read_text().splitlines():
        stack, _, count = line.rstrip().rpartition(" ")
        if stack and count.isdigit():
            samples.append((stack.split(";"), int(count)))
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("profile", type=Path)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    samples = read(args.profile)
    total = sum(count for _, count in samples)
    if not total:
        raise SystemExit("no samples")
    parts: Counter[str] = Counter()
    own: Counter[str] = Counter()
    within: Counter[str] = Counter()
    for frames, count in samples:
        stack = ";".join(frames)
        part = next((name for name, marks in PARTS if any(m in stack for m in marks)), "other")
        if part == "other" and frames[-1].startswith(UVLOOP):
            part = "uvloop's C loop (sockets, callbacks, epoll)"
        parts[part] += count
        names = [_short(f) for f in frames]
        own[names[-1]] += count
        for name in set(names):
            within[name] += count
    busy = total - parts["idle: waiting in epoll"]
    print(f"{total} samples, {busy} not idle")
    print("\nby part (share of the samples that were not idle):")
    for part, count in parts.most_common():
        if not part.startswith("idle"):
            print(f"  {100 * count / max(1, busy):5.1f}%  {part}")
    for title, counter in (("own samples", own), ("samples in all", within)):
        print(f"\nfunctions by {title} (share of all samples):")
        for name, count in counter.most_common(args.top):
            print(f"  {100 * count / total:5.1f}%  {name}")


if __name__ == "__main__":
    main()
