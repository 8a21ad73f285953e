"""tests/redis_engines.py: a Redis whose picked port another process took meanwhile starts on
another one; a restart keeps its port."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from redis_engines import PortTaken, Server, Single, running


def test_a_server_whose_port_was_taken_starts_on_another(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        server = Server(tmp_path, "pw", port=port)
        try:
            server.start()
            assert server.port != port
            with server.client() as client:
                assert client.ping()
        finally:
            server.stop()
    assert "Address already in use" in server.log.read_text()


def test_a_restart_keeps_the_port_and_says_so_when_it_was_taken(tmp_path: Path) -> None:
    with running(Single(tmp_path)) as engine:
        assert isinstance(engine, Single)
        server = engine.server
        port = server.port
        server.stop()
        server.start()  # the same port: clients know it by its URL
        assert server.port == port
        server.stop()
        with socket.create_server(("127.0.0.1", port)), pytest.raises(PortTaken):
            server.start()
        assert server.port == port
