"""What a run under faults is held to: every player's record against every final log.

Safety (``Report.violations``; any one is a failure):

- every match finishes (its players' final views say ``finished``);
- every final log (``/match/{id}.json``) verifies: ``rackcore.verify``, the function
  ``rackem verify`` runs, replays every move from the revealed seed;
- every acknowledged move is in its table's log exactly once: each ``moved`` answer's
  version names the move at that place of the log (``moves[version - 1]``: this seat,
  this move), every answer for one move id names the same version (a retry never
  applied twice), and no two move ids of a table share a version;
- no match is logged twice: one ``match_record`` per table over every replica's log.

Liveness, per fault window (``Window``: from the cut, or the pause or kill, to its heal),
over the tables in play when it started (``Stall``):

- ``during``: the longest time a table made no move (any seat's: a player's, a bot's,
  a cover's) within the window;
- ``players``: the longest time its players' moves went unacknowledged within it;
- ``after``: from the heal to the table's next move (tables still in play then).

Times come from the players' own clocks (``time.monotonic()``): when a view of a new
version, or a ``moved``, reached a player.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import time
import urllib.error
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from rackcore import verify

from .players import Player

__all__ = ["Report", "Stall", "Window", "check", "fetch_logs", "format_table"]


@dataclass
class Window:
    kind: str
    start: float
    end: float = 0.0  # the heal
    detail: str = ""


@dataclass
class Stall:
    tables: int = 0  # in play at the start
    during: float = 0.0  # longest without any move, within the window
    players: float = 0.0  # longest without a player's acknowledged move, within it
    after: float = 0.0  # the slowest first move after the heal
    worst_table: str = ""


@dataclass
class Report:
    matches: int = 0
    finished: int = 0
    acknowledged: int = 0
    moves_logged: int = 0
    violations: list[str] = field(default_factory=list)
    stalls: list[tuple[Window, Stall]] = field(default_factory=list)

    @property
    def safe(self) -> bool:
        return not self.violations


def _tables(players: Iterable[Player]) -> dict[str, list[Player]]:
    out: dict[str, list[Player]] = defaultdict(list)
    for player in players:
        if player.table_id is not None:
            out[player.table_id].append(player)
    return out


def fetch_logs(
    urls: list[str], table_ids: Iterable[str], timeout: float = 60.0
) -> dict[str, dict[str, Any]]:
    """Each table's final log, from any gateway that answers (tried until ``timeout``)."""
    out: dict[str, dict[str, Any]] = {}
    deadline = time.monotonic() + timeout
    todo = list(table_ids)
    while todo and time.monotonic() < deadline:
        for table_id in list(todo):
            for url in urls:
                address = f"{url}/match/{table_id}.json"
                with (
                    contextlib.suppress(urllib.error.URLError, OSError, ValueError),
                    urllib.request.urlopen(address, timeout=5) as reply,
                ):
                    out[table_id] = json.loads(reply.read())
                    todo.remove(table_id)
                    break
        if todo:
            time.sleep(0.5)
    return out


def _move_times(players: list[Player]) -> list[float]:
    """When the table reached each new version, as the first of its players saw it."""
    seen = sorted(
        [(t, v) for p in players for t, v in p.views]
        + [(a.at, a.version) for p in players for a in p.acks]
    )
    times, top = [], -1
    for at, version in seen:
        if version > top:
            if top >= 0:
                times.append(at)
            top = version
    return times


def _ack_times(players: list[Player]) -> list[float]:
    first: dict[str, float] = {}
    for player in players:
        for ack in player.acks:
            first[ack.move_id] = min(ack.at, first.get(ack.move_id, ack.at))
    return sorted(first.values())


def _longest_gap(times: list[float], start: float, end: float) -> float:
    if end <= start:
        return 0.0
    inside = [t for t in times if start < t < end]
    edges = [start, *inside, end]
    return max(b - a for a, b in itertools.pairwise(edges))


def _stall(window: Window, tables: dict[str, list[Player]], now: float) -> Stall:
    stall = Stall()
    for table_id, players in tables.items():
        views = [t for p in players for t, _ in p.views]
        if not views or min(views) > window.start:
            continue  # not yet in play
        finished = [p.finished_at for p in players if p.finished_at is not None]
        done = min(finished) if finished else now
        if done <= window.start:
            continue
        stall.tables += 1
        moves = _move_times(players)
        end = min(window.end, done)
        during = _longest_gap(moves, window.start, end)
        players_gap = _longest_gap(_ack_times(players), window.start, end)
        after = 0.0
        if done > window.end:
            later = [t for t in moves if t > window.end]
            after = (min(later) if later else done) - window.end
        if during > stall.during:
            stall.during, stall.worst_table = during, table_id
        stall.players = max(stall.players, players_gap)
        stall.after = max(stall.after, after)
    return stall


def check(
    players: list[Player],
    logs: dict[str, dict[str, Any]],
    records: Iterable[dict[str, Any]],
    windows: Iterable[Window] = (),
) -> Report:
    """Hold every player's acknowledged moves against the final ``logs`` (by table id);
    ``records``: every ``match_record`` line of every table replica's log."""
    report = Report()
    tables = _tables(players)
    report.matches = len(tables)
    for table_id, seated in sorted(tables.items()):
        statuses = {p.final["status"] if p.final else None for p in seated}
        reasons = {p.final.get("ended_reason") if p.final else None for p in seated}
        if statuses == {"finished"} and reasons <= {"finished", ""}:
            report.finished += 1
        else:
            report.violations.append(f"{table_id}: did not finish ({statuses}, {reasons})")
        log = logs.get(table_id)
        if log is None:
            report.violations.append(f"{table_id}: no final log")
            continue
        report.moves_logged += len(log["moves"])
        verdict = verify(log)
        if not verdict.get("valid") or not verdict.get("finished"):
            report.violations.append(f"{table_id}: the log does not verify: {verdict}")
        at_version: dict[int, str] = {}
        for player in seated:
            versions: dict[str, set[int]] = defaultdict(set)
            for ack in player.acks:
                versions[ack.move_id].add(ack.version)
            for move_id, found in versions.items():
                report.acknowledged += 1
                if len(found) > 1:
                    report.violations.append(f"{table_id}: {move_id} acknowledged at {found}")
                for version in found:
                    other = at_version.setdefault(version, move_id)
                    if other != move_id:
                        report.violations.append(
                            f"{table_id}: {move_id} and {other} both at version {version}"
                        )
                    if not 1 <= version <= len(log["moves"]):
                        report.violations.append(f"{table_id}: {move_id} v{version} not logged")
                        continue
                    logged = log["moves"][version - 1]
                    sent = player.sent.get(move_id)
                    want = {"seat": player.seat, **(sent.move if sent else {})}
                    if sent is None or {k: logged.get(k) for k in want} != want:
                        report.violations.append(
                            f"{table_id}: {move_id} v{version} is {logged}, not {want}"
                        )
    logged_twice = Counter(str(r.get("table")) for r in records)
    for table_id, count in sorted(logged_twice.items()):
        if count > 1:
            report.violations.append(f"{table_id}: match logged {count} times")
    for table_id in tables:
        if table_id in logs and not logged_twice.get(table_id):
            report.violations.append(f"{table_id}: no match_record line")
    now = time.monotonic()
    for window in windows:
        report.stalls.append((window, _stall(window, tables, now)))
    return report


def format_table(
    report: Report, bound: Callable[[Window], float] | None = None, load: str = ""
) -> str:
    """The report as a text table: one row a fault, then the totals."""
    head = (
        f"{'fault':<24} {'cut s':>6} {'tables':>6} {'no move s':>9} "
        f"{'no player s':>11} {'after heal s':>12} {'bound s':>7}"
    )
    rows = [head, "-" * len(head)]
    for window, stall in report.stalls:
        limit = f"{bound(window):.1f}" if bound else "-"
        rows.append(
            f"{window.kind:<24} {window.end - window.start:>6.1f} {stall.tables:>6} "
            f"{stall.during:>9.2f} {stall.players:>11.2f} {stall.after:>12.2f} {limit:>7}"
        )
    rows.append(
        f"matches {report.matches}, finished {report.finished}, acknowledged moves "
        f"{report.acknowledged}, logged moves {report.moves_logged}, "
        f"violations {len(report.violations)}" + (f"; load average {load}" if load else "")
    )
    rows.extend(f"  ! {v}" for v in report.violations[:20])
    return "\n".join(rows)
