"""A text frame that is not UTF-8 closes its connection with 1007: quietly (no traceback,
no log line), counted, and the gateway goes on serving everybody else."""

from __future__ import annotations

import logging

import pytest

from rackem.client import Client
from services.common.running import Running
from tests.system.raw_ws import RawWebSocket

from .conftest import metrics_text, ws_url

HELLO = b'{"type": "hello", "version": 1}'
LONE_SURROGATE = b'{"type": "ping", "t": "\xed\xa0\x80"}'  # U+D800 as CESU bytes


async def test_a_text_frame_that_is_not_utf8_closes_with_1007_quietly(
    gateway: Running, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    for bad in ([LONE_SURROGATE], [b"\xff\xfe", b"\xc3"], [LONE_SURROGATE, LONE_SURROGATE]):
        ws = await RawWebSocket.open(gateway.port)
        ws.send_text(HELLO)
        await ws.flush()
        assert await ws.recv() is not None  # welcome
        for frame in bad:  # back to back, in one write
            ws.send_text(frame)
        await ws.flush()
        assert await ws.closed() == 1007
        assert ws.close_reason == "text frames are UTF-8"
        await ws.aclose()
    async with Client(ws_url(gateway)) as client:
        assert (await client.ping(1.0))["t"] == 1.0
    assert 'rackem_gateway_dropped_total{reason="bad_utf8"} 3.0' in await metrics_text(gateway)
    server = [r for r in caplog.records if r.name.startswith(("uvicorn", "rackem", "asyncio"))]
    assert [r for r in server if r.levelno >= logging.WARNING or r.exc_info] == []
    assert [r for r in server if "UTF-8" in r.getMessage()] == []
