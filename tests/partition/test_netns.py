"""The network itself (tests/partition/netns.py): namespaces that reach each other over
the bridge, cuts that drop packets silently both ways and overlap, heals, and a
teardown that leaves nothing behind."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

from .netns import STATE, Network, Node, available

_why_not = available()
if _why_not is not None and os.environ.get("CI") != "true":
    pytest.skip(f"partition tests: {_why_not}", allow_module_level=True)

SERVER = """
import socket, sys
s = socket.socket()
s.bind((sys.argv[1], 7000))
s.listen()
while True:
    c, _ = s.accept()
    c.sendall(b"hi")
    c.close()
"""


def _reach(src: Node, dst: Node, timeout: float = 1.0) -> str:
    """What a connection from ``src`` to ``dst``'s server gets: ``hi``, or the error."""
    code = (
        "import socket, sys\n"
        "try:\n"
        f"    s = socket.create_connection(({dst.addr!r}, 7000), timeout={timeout})\n"
        "    print(s.recv(2).decode())\n"
        "except OSError as e:\n"
        "    print(type(e).__name__)\n"
    )
    done = subprocess.run(
        [*src.exec_prefix, sys.executable, "-c", code], capture_output=True, text=True, timeout=10
    )
    return done.stdout.strip()


def _wait_serving(src: Node, dst: Node) -> None:
    deadline = time.monotonic() + 10
    while _reach(src, dst) != "hi":
        assert time.monotonic() < deadline, f"{dst.name} does not serve"
        time.sleep(0.1)


def test_cuts_drop_both_ways_silently_overlap_and_heal() -> None:
    with Network() as net:
        a, b, c = net.add("a"), net.add("b"), net.add("c")
        assert len({a.addr, b.addr, c.addr, net.host.addr}) == 4
        servers = [
            subprocess.Popen([*node.exec_prefix, sys.executable, "-c", SERVER, node.addr])
            for node in (a, b)
        ]
        try:
            _wait_serving(net.host, a)
            _wait_serving(net.host, b)
            assert _reach(c, a) == _reach(a, b) == _reach(b, a) == "hi"
            first = net.cut([a], [b, net.host])
            # Silence, not a refusal: a timeout, as when a link is down.
            assert _reach(b, a) == _reach(a, b) == _reach(net.host, a) == "TimeoutError"
            assert _reach(c, a) == _reach(net.host, b) == "hi"
            second = net.cut([a, c], [b])
            net.heal(first)
            assert _reach(net.host, a) == "hi"  # only the first cut held this pair
            assert _reach(a, b) == "TimeoutError"  # the second still holds a ↔ b
            net.heal(second)
            assert _reach(a, b) == _reach(b, a) == "hi"
            assert net.dropped() == set()
        finally:
            for server in servers:
                server.kill()
                server.wait(5)
        namespaces = net.namespaces()
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(ns in listed for ns in namespaces)
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    assert f"rk{net.tag}" not in links
    assert not (STATE / net.tag).exists()


def test_parallel_networks_get_their_own_subnets() -> None:
    with Network() as one, Network() as two:
        assert one.subnet != two.subnet
        assert one.tag != two.tag
        x, y = one.add("x"), two.add("x")
        assert x.addr != y.addr and x.ns != y.ns
        with socket.socket() as probe:  # the host reaches both, from its own namespace
            probe.settimeout(1)
            assert probe.connect_ex((x.addr, 9)) in (111, 0)  # refused: it answered
