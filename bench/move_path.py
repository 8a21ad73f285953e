"""The server's side of one client's move under ``rackem up``, against the bare echo's.

    python3 bench/move_path.py [--moves 3000] [--json]

It starts ``rackem up`` in a process of its own with two hooks on the gateway's WebSocket
protocol (``services/gateway/ws_protocol.py``): the moment a frame arrives
(``data_received``) and the end of the write that carries its ``moved`` (held by
``send_text_now``)
(``_flush``). Between the two it takes the wall time and the CPU time of that one
thread (``time.thread_time``), move by move, so it shows whether the path waits
(loop turns, other processes) or works. One client plays the computer as fast as it
can (``BOT_DELAY_MS=0``), as ``bench/load.py --clients 1`` does; the bots' moves come
after each ``moved`` has left, so they are outside what is timed. Before each move the
client makes one round trip to ``bench/echo_server.py`` (as ``bench/load.py`` pairs them),
so the server has finished the bots' moves when the move arrives; the echo server's CPU
per round trip (the whole process, from /proc) is what a frame costs a server that only
sends it back.

``bench/load.py``'s ratio to the echo can come down only as far as this path allows:
the client's round trip is the echo's plus what the server spends beyond the echo's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _serve(port: int) -> None:
    """``rackem up`` on ``port`` with the hooks; prints the figures on SIGTERM."""
    import signal

    from rackem import up
    from services.common import loop
    from services.gateway.ws_protocol import GatewayWebSocket

    walls: list[float] = []
    cpus: list[float] = []
    started = [0.0, 0.0, 0.0]  # wall, thread CPU, whether a `moved` is held

    received = GatewayWebSocket.data_received
    held = GatewayWebSocket.send_text_now
    flush = GatewayWebSocket._flush

    def data_received(self: GatewayWebSocket, data: bytes) -> None:
        started[:] = [time.perf_counter(), time.thread_time(), 0.0]
        received(self, data)

    def hold(self: GatewayWebSocket, data: bytes) -> bool:
        if data.startswith(b'{"type":"moved"'):
            started[2] = 1.0
        return held(self, data)

    def flushed(self: GatewayWebSocket) -> None:
        flush(self)
        if started[2]:
            walls.append(time.perf_counter() - started[0])
            cpus.append(time.thread_time() - started[1])
            started[2] = 0.0

    GatewayWebSocket.data_received = data_received  # type: ignore[method-assign]
    GatewayWebSocket.send_text_now = hold  # type: ignore[method-assign]
    GatewayWebSocket._flush = flushed  # type: ignore[method-assign]

    async def main() -> None:
        system = await up.start("127.0.0.1", port, None, data_dir="")
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        print("listening", flush=True)
        await stop.wait()
        await system.stop()
        print(json.dumps({"wall": walls, "cpu": cpus}), flush=True)

    loop.run(main())


def _p50_us(seconds: list[float]) -> float:
    ordered = sorted(seconds[len(seconds) // 10 :])  # the first tenth warms up
    return round(ordered[len(ordered) // 2] * 1e6, 1)


async def _play(url: str, echo_url: str, moves: int) -> int:
    """Games against the computer until ``moves`` moves are answered, one echo round trip
    before each move (as ``bench/load.py`` pairs them): the server has finished the bots'
    moves by then, so none of their work is in the move's time."""
    from rackem.client import FINAL, Client, choose_move

    made = 0
    echo = Client(echo_url)
    await echo.connect(hello=False)  # the echo says no welcome
    try:
        async with Client(url) as client:
            while made < moves:  # whole matches: a table left to its bots would play on
                await client.create_table("Bench", {"players": 2}, level="easy", start_now=True)
                seen, continued = 0, -1
                while made < moves:
                    view = await client.next_view(seen)
                    seen = client.views_seen
                    if view["status"] in FINAL:
                        break
                    if view["status"] == "round_over":
                        if continued != view["view"]["round_no"]:
                            continued = view["view"]["round_no"]
                            await client.continue_round()
                    elif view["legal"]:
                        await echo.send({"type": "move", "id": str(made)})
                        await echo.recv()
                        await client.move(choose_move(view, "easy"), version=view["version"])
                        made += 1
    finally:
        await echo.close()
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--moves", type=int, default=3000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        _serve(args.serve)
        return
    from load_servers import cpu_s, free_port, start_echo, stop_process

    from services.common import loop

    port = free_port()
    env = {
        **os.environ,
        "GAMES_PER_IP": "0",
        "BOT_DELAY_MS": "0",
        "MSG_RATE": "1000",
        "MSG_BURST": "1000",
        "LOG_LEVEL": "WARNING",
    }
    env.pop("REDIS_URL", None)
    echo, echo_url = start_echo()
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port)], stdout=subprocess.PIPE, env=env, text=True
    )
    try:
        assert server.stdout is not None
        server.stdout.readline()  # "listening"
        before = cpu_s(echo.pid)
        loop.run(_play(f"ws://127.0.0.1:{port}/ws", echo_url, args.moves))
        echo_cpu_us = round((cpu_s(echo.pid) - before) / args.moves * 1e6, 1)
    finally:
        server.terminate()
        stop_process(echo)
    timed = json.loads(server.communicate(timeout=30)[0].strip().splitlines()[-1])
    figures = {
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "moves": len(timed["wall"]),
        "move_path_wall_us_p50": _p50_us(timed["wall"]),
        "move_path_cpu_us_p50": _p50_us(timed["cpu"]),
        "echo_server_cpu_us_per_round_trip": echo_cpu_us,
    }
    if args.json:
        print(json.dumps(figures))
        return
    for name, value in figures.items():
        print(f"  {name:<36} {value}")


if __name__ == "__main__":
    main()
