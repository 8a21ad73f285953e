"""A move's ``view`` and its ``moved`` reach the mover in one socket write, whether the
gateway links to its table replica over gRPC or in process (``rackem up``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from rackem.client import Client, choose_move
from services.common.running import Running
from services.gateway.ws_protocol import GatewayWebSocket

from .conftest import ws_url

FAST = {"players": 2, "target": 50}


class _Recorded:
    """The real transport, what each write carried kept."""

    def __init__(self, transport: asyncio.Transport, writes: list[bytes]) -> None:
        self._transport = transport
        self._writes = writes

    def write(self, data: bytes) -> None:
        self._writes.append(bytes(data))
        self._transport.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> list[list[bytes]]:
    """Every gateway WebSocket connection's writes, one list per connection."""
    recorded: list[list[bytes]] = []
    made = GatewayWebSocket.connection_made

    def recording(self: GatewayWebSocket, transport: asyncio.Transport) -> None:
        recorded.append([])
        made(self, _Recorded(transport, recorded[-1]))  # type: ignore[arg-type]

    monkeypatch.setattr(GatewayWebSocket, "connection_made", recording)
    return recorded


def _frames(data: bytes) -> list[dict[str, Any]]:
    """The (unmasked, uncompressed) text frames in one write, parsed; none in the
    handshake's HTTP answer."""
    if data.startswith(b"HTTP/"):
        return []
    frames, at = [], 0
    while at < len(data):
        text = data[at] == 0x81  # FIN, text (the rest: pings, closes)
        length, at = data[at + 1] & 0x7F, at + 2
        if length == 126:
            length, at = int.from_bytes(data[at : at + 2], "big"), at + 2
        elif length == 127:
            length, at = int.from_bytes(data[at : at + 8], "big"), at + 8
        if text:
            frames.append(json.loads(data[at : at + length]))
        at += length
    return frames


async def test_the_movers_view_and_moved_leave_in_one_write(
    writes: list[list[bytes]], system: Running
) -> None:
    async with Client(ws_url(system)) as client:
        await client.create_table("Ann", FAST, level="easy", start_now=True)
        moved = []
        for _ in range(6):  # draws and discards of three turns, the bot's between them
            view = await client.wait_view(lambda v: bool(v["legal"]), timeout=10)
            moved.append(await client.move(choose_move(view), version=view["version"]))
    (connection,) = writes
    for answer in moved:
        (carrying,) = [w for w in map(_frames, connection) if answer in w]
        at = carrying.index(answer)  # the view it answers for, just before it
        assert at > 0 and carrying[at - 1]["type"] == "view"
        assert carrying[at - 1]["version"] == answer["version"]
    sent = [f for w in connection for f in _frames(w) if f["type"] in ("view", "moved")]
    versions = [f["version"] for f in sent]
    assert versions == sorted(versions)  # no view overtakes an answer (or the other way)
