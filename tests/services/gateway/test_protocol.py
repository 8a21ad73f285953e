from __future__ import annotations

import json
from pathlib import Path

import pytest

from services.gateway.protocol import (
    CLIENT_TYPES,
    SERVER_TYPES,
    ProtocolError,
    check_name,
    from_service,
    parse,
    schemas,
)

SCHEMAS = Path(__file__).parents[3] / "services" / "gateway" / "schemas"
LIMIT = 4096


def refusal(frame: str | bytes | None) -> str:
    with pytest.raises(ProtocolError) as caught:
        parse(frame, LIMIT)
    return caught.value.code


def test_every_message_type_has_exactly_one_schema_file() -> None:
    files = {p.stem for p in SCHEMAS.glob("*.json")}
    assert files == set(CLIENT_TYPES) | set(SERVER_TYPES)
    for path in SCHEMAS.glob("*.json"):
        doc = json.loads(path.read_text(encoding="utf-8"))
        assert doc["$id"] == f"rackem/v1/{path.stem}"
        assert doc["properties"]["type"] == {"const": path.stem}
        assert doc["additionalProperties"] is False
    assert set(schemas()) == files


def test_a_valid_frame_is_parsed() -> None:
    message = parse('{"type": "move", "move": {"act": "place", "slot": 3}, "id": "m1"}', LIMIT)
    assert message == {"type": "move", "move": {"act": "place", "slot": 3}, "id": "m1"}


@pytest.mark.parametrize("frame", ["nope", "[1, 2]", '"hello"', "", b'{"type": "ping"}', None])
def test_a_frame_that_is_not_one_json_object_text_is_a_bad_frame(frame: str | bytes | None) -> None:
    assert refusal(frame) == "bad_frame"


def test_a_frame_over_the_limit_is_a_bad_frame_counting_bytes_not_characters() -> None:
    head = '{"type": "ping", "x": "'
    fits = head + "a" * (LIMIT - len(head) - 2) + '"}'
    assert len(fits.encode()) == LIMIT
    assert refusal(fits) == "bad_request"  # read, then refused for its unknown field
    assert refusal(fits.replace('"}', 'a"}')) == "bad_frame"
    wide = head + "é" * ((LIMIT - len(head)) // 2) + '"}'
    assert len(wide) < LIMIT < len(wide.encode())
    assert refusal(wide) == "bad_frame"


@pytest.mark.parametrize(
    "message",
    [
        {"type": "dance"},
        {"kind": "ping"},
        {"type": 3},
        {"type": "welcome", "version": 1, "server": "x"},  # a server message from a client
        {"type": "ping", "t": "now"},
        {"type": "hello"},
        {"type": "hello", "version": "1"},
        {"type": "quick_match", "name": "Ann", "players": 5},
        {"type": "quick_match", "name": "Ann", "players": 2, "seat": 0},
        {"type": "create_table", "name": "Ann", "level": "expert"},
        {"type": "create_table", "name": "Ann", "rules": [2]},
        {"type": "move", "move": {"act": "draw", "from": "stock", "seat": 1}, "id": "m"},
        {"type": "move", "move": {"act": "place", "slot": "3"}, "id": "m"},
        {"type": "move", "move": {"act": "place", "slot": 3}, "id": "x" * 65},
        {"type": "move", "move": {"act": "place", "slot": 3}},
        {"type": "start", "code": "ABCDEF"},
    ],
)
def test_unknown_types_and_bad_fields_are_bad_requests(message: dict[str, object]) -> None:
    assert refusal(json.dumps(message)) == "bad_request"


def test_a_bad_move_keeps_its_id_in_the_refusal() -> None:
    with pytest.raises(ProtocolError) as caught:
        parse('{"type": "move", "move": {"act": "draw", "seat": 0}, "id": "m7"}', LIMIT)
    assert caught.value.to_message()["id"] == "m7"


def test_names_are_trimmed_and_checked() -> None:
    assert check_name("  Ann  ") == "Ann"
    assert check_name("x" * 20) == "x" * 20
    assert check_name("Zoë 👩‍👩‍👧") == "Zoë 👩‍👩‍👧"  # joined emoji keep their joiner
    for bad in ("", "   ", "x" * 21, "A\nB", "A\x00", "evil\u202egnp"):
        with pytest.raises(ProtocolError) as caught:
            check_name(bad)
        assert caught.value.code == "bad_name"


def test_service_codes_map_to_protocol_codes_without_leaking_internal_text() -> None:
    assert from_service("no_code", "no such table").code == "no_code"
    assert from_service("wrong_replica", "x").code == "unavailable"
    assert from_service("no_table", "x").code == "bad_token"
    assert from_service("not_started", "x").code == "illegal_move"
    internal = from_service("internal", "KeyError: 'secret'")
    assert (internal.code, internal.message) == ("internal", "internal error")
    assert from_service("stale_version", "old", "m3").to_message() == {
        "type": "error",
        "code": "stale_version",
        "message": "old",
        "id": "m3",
    }
