"""services/common/logs.py: an exception reaches a log line by its type and trace, never its
text, which may hold what a log must not (a name, a token)."""

from __future__ import annotations

import io
import json
import logging

import grpc
import pytest

from services._gen.rackem.v1 import bot_pb2, bot_pb2_grpc
from services.bot.service import BotService
from services.bot.servicer import BotServicer
from services.common.channels import open_channel
from services.common.errors import from_rpc_error
from services.common.grpc_server import bind, new_server
from services.common.logs import JsonFormatter

NAME = "Planted Petronella"
TOKEN = "tok_3f9a2c77e1d04b58"


def _lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


@pytest.fixture
def captured() -> io.StringIO:
    """What the ``rackem`` loggers write, formatted as every service formats it."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter("test"))
    logger = logging.getLogger("rackem")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    yield stream
    logger.removeHandler(handler)
    logger.setLevel(level)


def _fail_with_a_name() -> None:
    try:
        {"seats": {}}["seats"][NAME]  # type: ignore[index]
    except KeyError as exc:
        raise ValueError(f"no seat for {NAME} holding {TOKEN}") from exc


def test_an_exception_is_logged_by_type_and_trace_never_its_text(captured: io.StringIO) -> None:
    log = logging.getLogger("rackem.test")
    try:
        _fail_with_a_name()
    except ValueError:
        log.exception("unexpected_error")
        log.error("with_exc_info", exc_info=True)
    text = captured.getvalue()
    assert NAME not in text and TOKEN not in text
    for line in _lines(captured):
        assert line["error_type"] == "KeyError <- ValueError"
        assert "_fail_with_a_name" in str(line["trace"])  # where it failed: code, not values


def test_a_librarys_record_keeps_its_template_and_drops_its_values() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter("test"))
    library = logging.getLogger("psycopg.pool")
    library.addHandler(handler)
    try:
        library.warning("error connecting in %r: %s", "archive", "host 10.1.2.3 port 5432")
        library.warning(f"formatted early for {NAME}")  # no args: the text is not kept
    finally:
        library.removeHandler(handler)
    text = stream.getvalue()
    assert "10.1.2.3" not in text and NAME not in text
    first, second = _lines(stream)
    assert (first["event"], first["logger"]) == ("library_log", "psycopg.pool")
    assert first["template"] == "error connecting in %r: %s"
    assert "template" not in second


class _LeakyBots(BotService):
    """A bot service whose every choice fails with a message holding a name and a token."""

    def choose_move(self, request: bot_pb2.ChooseMoveRequest) -> bot_pb2.ChooseMoveReply:
        _fail_with_a_name()
        raise AssertionError("unreachable")


async def test_a_service_failing_unexpectedly_logs_no_name_and_answers_internal(
    captured: io.StringIO,
) -> None:
    server = new_server()
    bot_pb2_grpc.add_BotServicer_to_server(BotServicer(_LeakyBots()), server)
    port = bind(server, "127.0.0.1", 0)
    await server.start()
    try:
        async with open_channel(f"127.0.0.1:{port}") as channel:
            with pytest.raises(grpc.aio.AioRpcError) as failed:
                await bot_pb2_grpc.BotStub(channel).ChooseMove(
                    bot_pb2.ChooseMoveRequest(view_json="{}", level="hard"), timeout=5
                )
    finally:
        await server.stop(None)
    refusal = from_rpc_error(failed.value)
    assert (refusal.code, refusal.message) == ("internal", "internal error")
    text = captured.getvalue()
    assert NAME not in text and TOKEN not in text
    (line,) = [line for line in _lines(captured) if line["event"] == "internal_error"]
    assert line["error_type"] == "KeyError <- ValueError"
