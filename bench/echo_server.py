"""A bare Starlette + uvicorn WebSocket echo server: the floor ``bench/load.py`` compares with.

    python3 bench/echo_server.py [--host 127.0.0.1] [--port 0]

It runs uvicorn the way the gateway does (``services/gateway/server.py``): the
``websockets-sansio`` backend, ``Server.serve`` on a uvloop event loop, and a listening
socket made with its protocol set, so asyncio turns Nagle's algorithm off on every
accepted connection. Each text frame is sent straight back. It prints
``listening PORT`` once it accepts connections and stops on SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import socket
from collections.abc import Generator

import uvicorn
import uvloop
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect


async def echo(ws: WebSocket) -> None:
    await ws.accept()
    with contextlib.suppress(WebSocketDisconnect):
        while True:
            await ws.send_text(await ws.receive_text())


def create_app() -> Starlette:
    return Starlette(routes=[WebSocketRoute("/ws", echo)])


class _Server(uvicorn.Server):
    """uvicorn without its own signal handlers (``main`` owns them), as in the gateway."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


def _listen(host: str, port: int, backlog: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(backlog)
    return sock


async def serve(host: str, port: int) -> None:
    config = uvicorn.Config(
        create_app(),
        host=host,
        port=port,
        ws="websockets-sansio",
        lifespan="off",
        log_config=None,
        log_level="warning",
        access_log=False,
    )
    sock = _listen(host, port, config.backlog)
    server = _Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            await task
            raise SystemExit("the echo server did not start")
        await asyncio.sleep(0.01)
    print(f"listening {sock.getsockname()[1]}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    server.should_exit = True
    await task


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    uvloop.run(serve(args.host, args.port))


if __name__ == "__main__":
    main()
