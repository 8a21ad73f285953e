"""``rackem up``'s Daily Rack secret: made on the first start in ``--data DIR/daily.secret``
(its owner's only), the same after a restart (the days' commitments stay), or
``DAILY_SECRET`` if set."""

from __future__ import annotations

import hashlib
import hmac
import signal
import stat
from pathlib import Path

from rackem.client import Client
from rackem.up import daily_secret
from tests.rackem.test_up import rackem_up


def _commitment(secret_hex: str, day: str) -> str:
    seed = hmac.new(bytes.fromhex(secret_hex), f"rackem-daily/{day}".encode(), hashlib.sha256)
    return hashlib.sha256(seed.digest()).hexdigest()


def test_the_secret_is_made_once_in_the_data_directory(tmp_path: Path) -> None:
    data = tmp_path / "data"
    made = daily_secret({}, str(data))
    path = data / "daily.secret"
    assert len(made) == 64 and path.read_text().strip() == made
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert daily_secret({}, str(data)) == made  # kept
    assert daily_secret({"DAILY_SECRET": "given"}, str(data)) == "given"  # the setting wins
    assert daily_secret({}, "") != daily_secret({}, "")  # no directory: one per run


async def test_rackem_up_publishes_the_same_commitment_after_a_restart(tmp_path: Path) -> None:
    data = tmp_path / "data"
    commitments = []
    for _ in range(2):
        with rackem_up("--data", str(data)) as (proc, url):
            async with Client(url) as client:
                await client.send({"type": "daily"})
                answer = await client.wait_for("daily", timeout=10)
            commitments.append(answer["commitment"])
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=10) == 0
    secret = (data / "daily.secret").read_text().strip()
    assert commitments == [_commitment(secret, answer["day"])] * 2
