from __future__ import annotations

from services.gateway.limits import AbuseCounter, GameLimiter, TokenBucket, client_key


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_allows_its_burst_then_refills_at_its_rate() -> None:
    clock = Clock()
    bucket = TokenBucket(rate=2.0, burst=3, clock=clock)
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]
    clock.now += 0.5
    assert [bucket.take(), bucket.take()] == [True, False]
    clock.now += 100
    assert sum(bucket.take() for _ in range(10)) == 3


def test_abuse_is_counted_within_a_sliding_window() -> None:
    clock = Clock()
    abuse = AbuseCounter(limit=3, window=10.0, clock=clock)
    assert [abuse.strike(), abuse.strike()] == [False, False]
    clock.now += 10.0
    assert abuse.strike() is False  # the first two fell out of the window
    assert abuse.strike() is False
    assert abuse.strike() is True


def test_new_games_are_limited_per_address_per_window() -> None:
    clock = Clock()
    games = GameLimiter(limit=2, window=600.0, clock=clock)
    assert [games.allow("a"), games.allow("a"), games.allow("a")] == [True, True, False]
    assert games.allow("b") is True
    clock.now += 599.0
    assert games.allow("a") is False
    clock.now += 1.0
    assert games.allow("a") is True


def test_addresses_are_forgotten_once_their_window_has_passed() -> None:
    clock = Clock()
    games = GameLimiter(limit=5, window=60.0, clock=clock)
    for i in range(100):
        games.allow(f"10.0.0.{i}")
    assert len(games) == 100
    clock.now += 61.0
    games.allow("10.0.1.1")
    assert len(games) == 1


def test_a_limit_of_zero_means_no_limit() -> None:
    games = GameLimiter(limit=0, window=60.0)
    assert all(games.allow("a") for _ in range(1000))
    assert len(games) == 0


def test_clients_are_limited_by_ipv4_address_or_ipv6_slash_64() -> None:
    assert client_key("203.0.113.7") == "203.0.113.7"
    assert client_key("2001:db8:1:2:3:4:5:6") == client_key("2001:db8:1:2:ffff::1")
    assert client_key("2001:db8:1:2::1") == "2001:db8:1:2::/64"
    assert client_key("2001:db8:1:3::1") != client_key("2001:db8:1:2::1")
    assert client_key("::ffff:203.0.113.7") == "203.0.113.7"
    assert client_key("testclient") == "testclient"
