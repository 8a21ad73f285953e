"""``rackem play``: a whole match in a terminal, against the computer or other people.

Keys (then Enter): ``s`` stock, ``d`` discard, ``1``-``9``/``0`` place the held card in
slot 5..50, ``t`` throw it away, ``r<n>`` repair (swap slot n and the next), ``c``
continue after a round, ``q`` leave. Prompts start with a bracketed tag (``[draw]``,
``[place]``, ``[continue]``, ``[menu]``, …) so scripts can drive the client too.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import sys
import threading
from typing import Any, TextIO

from rackem.client import FINAL, Client, ConnectionLost, ServerError

KEYS = "1234567890"  # key i places in slot i (0-based); "0" is the tenth slot, 50
MARKS = [5 * (i + 1) for i in range(10)]
Message = dict[str, Any]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("play", help="play in this terminal")
    p.add_argument(
        "--url", default="http://127.0.0.1:8000", help="the server (default %(default)s)"
    )
    p.add_argument("--name", help="your name at the table (asked if not given)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(Terminal(args.url, args.name).main())
    except KeyboardInterrupt:
        return 130


class Lines:
    """Lines typed on stdin, read by a daemon thread (works with terminals and pipes alike)."""

    def __init__(self, stream: TextIO) -> None:
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        def pump() -> None:
            for line in stream:
                loop.call_soon_threadsafe(self._queue.put_nowait, line.strip())
            loop.call_soon_threadsafe(self._queue.put_nowait, None)

        threading.Thread(target=pump, name="stdin", daemon=True).start()

    async def get(self) -> str | None:
        line = await self._queue.get()
        if line is None:
            self._queue.put_nowait(None)  # stays at end of input
        return line


class Terminal:
    def __init__(self, url: str, name: str | None, out: TextIO = sys.stdout) -> None:
        self.url = url
        self.name = name
        self.out = out
        self.client = Client(url, client="rackem-play")
        self.ids = itertools.count(1)
        self.prompted: tuple[int, str, int] | None = None
        self.lobby_status = ""

    def say(self, *lines: str) -> None:
        for line in lines:
            print(line, file=self.out)
        self.out.flush()

    async def ask(self, tag: str, question: str, default: str = "") -> str | None:
        self.say(f"[{tag}] {question}" + (f" [{default}]" if default else ""))
        line = await self.lines.get()
        return None if line is None else (line or default)

    async def main(self) -> int:
        self.lines = Lines(sys.stdin)
        try:
            await self.client.connect()
        except (OSError, ConnectionLost, TimeoutError) as exc:
            self.say(f"cannot reach {self.client.url}: {exc}")
            return 1
        try:
            if self.name is None:
                self.name = await self.ask("name", "your name?", "Player")
            while self.name is not None and await self.menu():
                if await self.game() == "lost":
                    return 1
            return 0
        finally:
            await self.client.close()

    # -- menu ----------------------------------------------------------------------------

    async def menu(self) -> bool:
        """Sit down somewhere; False to quit."""
        while True:
            choice = await self.ask(
                "menu",
                "1: new game against the computer · 2: quick match · "
                "3: create a private table · 4: join a table by code · q: quit",
            )
            if choice is None or choice.lower() == "q":
                return False
            try:
                if await self.sit(choice):
                    return True
            except ServerError as err:
                self.say(f"! {err.message}")

    async def sit(self, choice: str) -> bool:
        assert self.name is not None
        if choice == "4":
            code = await self.ask("code", "room code?")
            if code:
                await self.client.join(code, self.name)
                return True
            return False
        if choice not in ("1", "2", "3"):
            self.say("! choose 1, 2, 3, 4 or q")
            return False
        players = await self.ask("players", "how many players, 2-4?", "2")
        if players not in ("2", "3", "4"):
            self.say("! 2, 3 or 4 players")
            return False
        if choice == "2":
            await self.client.quick_match(self.name, int(players))
            return True
        level = await self.ask("level", "computer players: easy, medium or hard?", "medium")
        if level not in ("easy", "medium", "hard"):
            self.say("! easy, medium or hard")
            return False
        rules: Message = {"players": int(players)}
        if choice == "1":
            target = await self.ask("target", "points to win the match?", "500")
            if target is None or not target.isdigit():
                self.say("! a number of points, like 500")
                return False
            rules["target"] = int(target)
        await self.client.create_table(self.name, rules, level, start_now=choice == "1")
        return True

    # -- a game --------------------------------------------------------------------------

    async def game(self) -> str:
        """Show the table and take keys until the match is over ("over"), left, or lost."""
        self.prompted = None
        self.lobby_status = ""
        inbox = asyncio.ensure_future(self.client.recv(timeout=None))
        keys = asyncio.ensure_future(self.lines.get())
        try:
            while True:
                done, _ = await asyncio.wait({inbox, keys}, return_when=asyncio.FIRST_COMPLETED)
                if inbox in done:
                    try:
                        message = inbox.result()
                    except ConnectionLost as lost:
                        self.say(f"! the connection closed ({lost.code})")
                        return "lost"
                    ending = self.show(message)
                    if ending:
                        return ending
                    inbox = asyncio.ensure_future(self.client.recv(timeout=None))
                if keys in done:
                    line = keys.result()
                    if line is None:
                        await self.client.send({"type": "leave"})
                        return "left"
                    await self.key(line.lower())
                    keys = asyncio.ensure_future(self.lines.get())
        finally:
            for task in (inbox, keys):
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task

    async def key(self, line: str) -> None:
        view = self.client.latest_view
        if line == "q":
            await self.client.send({"type": "leave"})
        elif line == "c":
            await self.client.send({"type": "continue"})
        elif line == "s" and (view is None or self.lobby_status == "waiting"):
            await self.client.send({"type": "start"})
        elif line in ("s", "d"):
            await self.move({"act": "draw", "from": "stock" if line == "s" else "discard"})
        elif len(line) == 1 and line in KEYS:
            await self.move({"act": "place", "slot": KEYS.index(line)})
        elif line == "t":
            await self.move({"act": "throw"})
        elif len(line) == 2 and line[0] == "r" and line[1] in KEYS[:9]:
            await self.move({"act": "repair", "slot": KEYS.index(line[1])})
        elif line in ("", "?", "h"):
            if view is not None:
                self.board(view)
            self.say(__doc__.split("\n\n")[1] if __doc__ else "")
        else:
            self.say("! unknown key (h for help)")

    async def move(self, move: Message) -> None:
        view = self.client.latest_view
        message: Message = {"type": "move", "move": move, "id": f"k{next(self.ids)}"}
        if view is not None:
            message["version"] = view["version"]
        await self.client.send(message)

    # -- showing -------------------------------------------------------------------------

    def show(self, message: Message) -> str:
        kind = message["type"]
        if kind in ("lobby", "view") and message["table_id"] != self.client.table_id:
            return ""  # left over from an earlier table
        if kind == "seated":
            self.say(f"seated at table {message['code']} in seat {message['seat'] + 1}")
        elif kind == "lobby":
            self.lobby(message)
            if message["status"] == "closed":
                return "over"
        elif kind == "view":
            return self.view(message)
        elif kind == "left":
            self.say("you left the table")
            return "left"
        elif kind == "error":
            self.say(f"! {message['message']}")
        return ""

    def lobby(self, lobby: Message) -> None:
        self.lobby_status = lobby["status"]
        seats = ", ".join(
            s["name"] + (" (computer)" if s["bot"] else "") if s["taken"] else "(free)"
            for s in lobby["seats"]
        )
        self.say(f"table {lobby['code']} · {lobby['status']} · {seats}")
        if lobby["status"] == "waiting":
            starter = lobby["creator_seat"] == lobby["you"]
            hint = "s: start now, computer players fill free seats · " if starter else ""
            self.say(f"[lobby] room code {lobby['code']} · {hint}q: leave")

    def view(self, message: Message) -> str:
        state = message["view"]
        me = state["seat"]
        names = {s["seat"]: s["name"] for s in message["seats"]}
        last = message["last_move"]
        if last is not None and last["seat"] != me and message["status"] == "playing":
            self.say(f"  {names.get(last['seat'], '?')} {describe(last, state)}")
        key = (message["version"], message["status"], state["round_no"])
        if key == self.prompted:
            return ""
        if message["status"] in FINAL:
            self.board(message)
            self.finish(message, names)
            return "over"
        if message["status"] == "round_over":
            self.prompted = key
            self.board(message)
            if not message["continued"][me]:
                self.say("[continue] c: next round · q: leave")
        elif message["legal"]:
            self.prompted = key
            self.board(message)
            self.prompt(state)
        return ""

    def prompt(self, state: Message) -> None:
        if state["phase"] == "draw":
            top = f"the {state['discard'][-1]} from " if state["discard"] else ""
            self.say(f"[draw] s: take from the stock · d: take {top}the discard pile · q: leave")
        else:
            throw = " · t: throw it away" if state["held_from"] == "stock" else ""
            repair = (
                " · r<n>: swap slot n and the next"
                if state["rules"]["repair_token"] and (state["repair_tokens"][state["seat"]])
                else ""
            )
            self.say(f"[place] holding {state['held']}: 1-9,0 put it in that slot{throw}{repair}")

    def board(self, message: Message) -> None:
        state = message["view"]
        me = state["seat"]
        rules = state["rules"]
        self.say(
            "",
            f"── table {message['code']} · round {state['round_no']} · "
            f"play to {rules['target']} ──",
        )
        for seat in message["seats"]:
            n = seat["seat"]
            who = seat["name"] + ("" if n != me else " (you)")
            kind = {"bot": f"computer, {seat['level']}", "cover": "computer covering"}.get(
                seat["kind"], "" if seat["connected"] or n == me else "away"
            )
            info = [f"{who}{f' ({kind})' if kind else ''}", f"score {state['scores'][n]}"]
            if n != me:
                known = [f"{MARKS[i]}:{c}" for i, c in enumerate(state["known"][n]) if c]
                if known:
                    info.append("known " + " ".join(known))
                if state["center"]:
                    info.append(f"center {state['center'][n]}")
            if state["turn"] == n and message["status"] == "playing":
                info.append("◀ to play")
            self.say("  " + " · ".join(info))
        top = state["discard"][-1] if state["discard"] else "-"
        self.say(f"  discard {top} · stock {state['stock_count']}")
        self.say(rack_lines(state["rack"]))
        if state["racks"] is not None and message["status"] != "playing":
            for n, rack in enumerate(state["racks"]):
                if n != me:
                    self.say(f"  {message['seats'][n]['name']}: " + " ".join(map(str, rack)))
            if state["rounds"]:
                points = state["rounds"][-1]["points"]
                self.say("  this round: " + " · ".join(f"{p}" for p in points))

    def finish(self, message: Message, names: dict[int, str]) -> None:
        state = message["view"]
        scores = " · ".join(f"{names[n]} {s}" for n, s in enumerate(state["scores"]))
        if state["winner"] is None:
            self.say(f"match over ({message['ended_reason'] or message['status']}): {scores}")
        else:
            winner = state["winner"]
            who = f"team {winner + 1}" if state["rules"]["partners"] else names[winner]
            self.say(f"match over: {who} wins · {scores}")
        if message["ended_reason"] == "finished":
            base = self.client.url.replace("ws", "http", 1).rsplit("/ws", 1)[0]
            self.say(f"match log: {base}/match/{message['table_id']}.json (rackem verify it)")


def rack_lines(rack: list[int]) -> str:
    cells = (
        [f"{m:>4}" for m in MARKS],
        [f"{c:>4}" for c in rack],
        [f"{'[' + k + ']':>4}" for k in KEYS],
    )
    return "\n".join("  " + " ".join(row) for row in cells)


def describe(move: Message, state: Message) -> str:
    if move["act"] == "draw":
        return "took from the stock" if move["from"] == "stock" else "took from the discard pile"
    if move["act"] == "place":
        return f"placed a card in slot {MARKS[move['slot']]}"
    if move["act"] == "throw":
        top = state["discard"][-1] if state["discard"] else "?"
        return f"threw away {top}"
    return f"swapped slots {MARKS[move['slot']]} and {MARKS[move['slot'] + 1]}"
