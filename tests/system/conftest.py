"""One whole system per test module: every service its own process, on a real Redis
(Debian's redis-server, durable as deployed: AOF and a password; tests/redis_engines.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from redis_engines import Engines

from .otlp import OtlpSink
from .stack import Stack

# Short clocks so that covering a silent seat happens within a test; bots move at once.
SETTINGS = {
    "DECISION_MS": "2500",
    "BOT_DELAY_MS": "0",
    "CONTINUE_MS": "1000",
    "FILL_MS": "1500",
    "FILL_LONE_MS": "3000",
    # Test clients move as fast as the server answers, far faster than people.
    "MSG_RATE": "200",
    "MSG_BURST": "400",
    # A busy CI machine is not overload to turn these clients away for (admission has
    # tests of its own).
    "OVERLOAD_LAG_MS": "0",
    "OVERLOAD_ANSWER_MS": "0",
}


@pytest.fixture(scope="module")
def stack(redis_engines: Engines, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    workdir: Path = tmp_path_factory.mktemp("stack")
    # Each module's system starts from an empty Redis: no open tables of a stopped system.
    engine = redis_engines.get("single")
    engine.flush()
    system = Stack(workdir, engine.url, SETTINGS)
    system.build(tables=1)
    try:
        system.start()
        yield system
    finally:
        system.stop()


@pytest.fixture(scope="module")
def sink() -> Iterator[OtlpSink]:
    """An OTLP TraceService of the test's own, on a real gRPC port (tests/system/otlp.py),
    for services to export their spans to."""
    receiver = OtlpSink()
    try:
        yield receiver
    finally:
        receiver.stop()
