from __future__ import annotations

from services.gateway.origins import origin_allowed


def test_clients_without_an_origin_are_not_browsers_and_are_allowed() -> None:
    assert origin_allowed(None, "rack.example", ())


def test_the_gateways_own_origin_is_allowed() -> None:
    assert origin_allowed("https://rack.example", "rack.example", ())
    assert origin_allowed("http://127.0.0.1:8000", "127.0.0.1:8000", ())
    assert origin_allowed("HTTP://Rack.Example", "rack.example", ())


def test_other_origins_need_the_allowlist() -> None:
    assert not origin_allowed("https://evil.example", "rack.example", ())
    assert not origin_allowed("http://127.0.0.1:9000", "127.0.0.1:8000", ())
    assert not origin_allowed("null", "rack.example", ())
    assert not origin_allowed("file://rack.example", "rack.example", ())
    allowed = ("https://play.rack.example", "http://localhost:5173/")
    assert origin_allowed("https://play.rack.example", "api.rack.example", allowed)
    assert origin_allowed("http://localhost:5173", "api.rack.example", allowed)
    assert not origin_allowed("https://evil.example", "api.rack.example", allowed)
    assert origin_allowed("https://anything.example", "api.rack.example", ("*",))
