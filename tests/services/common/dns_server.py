"""A DNS server of the test's own, on loopback: it answers every name with the IPv4
addresses it is told, as a cluster's DNS answers a headless Service's name with its ready
pods' addresses, and the answer can change while clients hold channels to the name.

gRPC's c-ares resolver asks it when a target names it as the authority:
``dns://127.0.0.1:PORT/any-name:50053``. Only A queries get answers (AAAA and anything
else: none, NOERROR), with a TTL of 0.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

__all__ = ["DnsServer", "dns_server"]

_A, _IN = 1, 1


def _question_end(query: bytes) -> int:
    """The offset just past the (first) question's name, type and class."""
    at = 12
    while query[at]:
        at += 1 + query[at]
    return at + 1 + 4


def answer(query: bytes, addresses: Sequence[str]) -> bytes:
    """The reply to ``query``: its question, and an A record per address if it asks for A."""
    (ident, flags) = struct.unpack("!HH", query[:4])
    end = _question_end(query)
    qtype = struct.unpack("!H", query[end - 4 : end - 2])[0]
    records = [
        struct.pack("!HHHIH", 0xC00C, _A, _IN, 0, 4) + socket.inet_aton(address)
        for address in (addresses if qtype == _A else ())
    ]
    recursion = flags & 0x0100
    header = struct.pack("!HHHHHH", ident, 0x8080 | recursion, 1, len(records), 0, 0)
    return header + query[12:end] + b"".join(records)


class DnsServer:
    """Serves on 127.0.0.1:``port`` from a thread; ``addresses`` may be replaced at any time."""

    def __init__(self, addresses: Sequence[str]) -> None:
        self.addresses: tuple[str, ...] = tuple(addresses)
        self.queries = 0
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.settimeout(0.1)
        self.port: int = self._socket.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="dns-server", daemon=True)

    def authority(self, name: str, port: int) -> str:
        """The gRPC target for ``name:port`` resolved here."""
        return f"dns://127.0.0.1:{self.port}/{name}:{port}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                query, peer = self._socket.recvfrom(512)
            except TimeoutError:
                continue
            self.queries += 1
            self._socket.sendto(answer(query, self.addresses), peer)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self._socket.close()


@contextmanager
def dns_server(addresses: Sequence[str]) -> Iterator[DnsServer]:
    server = DnsServer(addresses)
    server.start()
    try:
        yield server
    finally:
        server.stop()
