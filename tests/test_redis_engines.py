"""tests/redis_engines.py: a Redis whose picked port another process took meanwhile starts on
another one, also when what holds it answers as a Redis would; a restart keeps its port."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import pytest
import redis
from redis_engines import PortTaken, Server, Single, _binary, free_port, running


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


def test_a_port_held_by_a_sentinel_that_answers_any_password_is_not_taken_for_the_server(
    tmp_path: Path,
) -> None:
    """A Sentinel without a password answers the server's authenticated PING: the server
    must not count that as its own start (its process fails to bind and exits)."""
    port = free_port()
    config = tmp_path / "sentinel.conf"
    config.write_text(f"port {port}\nbind 127.0.0.1\ndir {tmp_path}\n")
    sentinel = subprocess.Popen([_binary("redis-sentinel"), str(config)], stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with redis.Redis(port=port, password="pw", socket_timeout=1) as holder:
                    assert holder.ping()  # answers the password it has not got
                break
            except redis.ConnectionError:
                assert time.monotonic() < deadline, "the sentinel never answered"
                time.sleep(0.05)
        server = Server(tmp_path / "server", "pw", port=port)
        try:
            server.start()
            assert server.port != port
            with server.client() as client:
                info = client.info("server")
            assert server.process is not None
            assert (info["redis_mode"], info["process_id"]) == ("standalone", server.process.pid)
        finally:
            server.stop()
    finally:
        sentinel.terminate()
        sentinel.wait(10)


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
