"""JSON-lines logging. Never log names, tokens, IPs, or a seed before its reveal.

An exception is logged by its type and its trace, never its text: a message is written
wherever the exception is raised, often from the value that failed (``KeyError('ana')``,
a name; ``ValueError(token)``), in our code and in every library's, so no rule on
callers could keep it out. Every record's exception goes through ``exception_fields``,
``exc_info=True`` and ``log.exception`` included: ``error_type`` (the chain of types,
causes first, as ``ValueError <- KeyError``) and ``trace`` (the frames, file, line,
function and source line, of each). A trace holds code, never values.

A library's record (a logger outside ``rackem``: grpc, uvicorn, psycopg's pool…) is
written as ``library_log`` with its logger's name and, where the library left its values
to the formatter, its message's template (``"error connecting in %r: %s"``), never the
values: a library writes what it likes into them (a database's host and port, a client's
address).

With tracing on (services/common/tracing.py), a record written inside a sampled trace's
span carries its ``trace_id`` and ``span_id``, so a line leads to its trace and back.
"""

from __future__ import annotations

import json
import logging
import sys
import time
import traceback
from typing import Any

from services.common.tracing import current_ids

__all__ = ["JsonFormatter", "configure", "event", "exception_fields"]


class JsonFormatter(logging.Formatter):
    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        ours = _ours(record)
        out: dict[str, Any] = {
            "ts": round(time.time(), 3),
            "level": record.levelname.lower(),
            "service": self.service,
            "event": record.getMessage() if ours else "library_log",
        }
        if not ours:
            out["logger"] = record.name
            if record.args and isinstance(record.msg, str):
                out["template"] = record.msg
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            out.update(fields)
        if record.exc_info and record.exc_info[1] is not None:
            out.update(exception_fields(record.exc_info[1]))
        ids = current_ids()
        if ids is not None:
            out["trace_id"], out["span_id"] = ids
        return json.dumps(out, default=str)


def _ours(record: logging.LogRecord) -> bool:
    return record.name == "rackem" or record.name.startswith("rackem.")


def exception_fields(exc: BaseException) -> dict[str, str]:
    """``exc`` as a log line may carry it: the types of its chain (its causes and contexts)
    and their frames, without any exception's text."""
    chain: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or (
            None if current.__suppress_context__ else current.__context__
        )
    chain.reverse()  # the first cause first, as Python prints a chain
    types = " <- ".join(type(part).__name__ for part in chain)
    trace = "".join(
        f"{type(part).__name__}:\n" + "".join(traceback.format_tb(part.__traceback__))
        for part in chain
    )
    return {"error_type": types, "trace": trace}


def configure(service: str, level: str = "INFO") -> None:
    """Send every ``rackem`` log record to stderr as one JSON object per line."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter(service))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


def event(logger: logging.Logger, name: str, level: int = logging.INFO, **fields: Any) -> None:
    """Log one event with plain fields: ``event(log, "table_started", table=tid, players=2)``."""
    logger.log(level, name, extra={"fields": fields})
