"""Log lines with the request's context: one JSON object per line, or text for people.

The context of the request being served (``request_id``, ``game``, ``player``,
``seat``, ``ticket``, ``method``) lives in :mod:`contextvars`: the interceptor
binds the method, the servicers and use cases bind the rest as they learn it
(:func:`bind`), and every line logged meanwhile carries it. Each RPC runs in a
task of its own, so contexts never mix. Fields passed with ``extra=`` are
added as they are (they win over the context).

JSON (``TRUC_LOG_FORMAT=json``, the default)::

    {"time": "2026-01-02T03:04:05.678Z", "level": "INFO", "logger": "truc.game",
     "message": "game created", "game": "Qx...", "method": "CreateGame", ...}

Text (``TRUC_LOG_FORMAT=text``): ``time LEVEL logger: message key=value ...``.

Never log a card: actions are logged by kind (a card in a hand is hidden
information, and a card played is in the game's own log already).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from contextvars import ContextVar
from typing import Any, Final

__all__ = ["FORMATS", "JsonFormatter", "TextFormatter", "bind", "configure", "context"]

FORMATS: Final = ("json", "text")

_FIELDS: Final = ("request_id", "game", "player", "seat", "ticket", "method")
_VARS: Final[dict[str, ContextVar[str | int | None]]] = {
    name: ContextVar(f"truc_{name}", default=None) for name in _FIELDS
}
# Attributes every LogRecord has: anything else on a record came with ``extra=``.
_STANDARD: Final = frozenset(
    logging.LogRecord("", 0, "", 0, "", None, None).__dict__.keys() | {"message", "asctime"}
)


def bind(**fields: str | int | None) -> None:
    """Set context fields (``request_id``, ``game``, ``player``, ``seat``,
    ``ticket``, ``method``) for the rest of the current task; None clears one."""
    for name, value in fields.items():
        _VARS[name].set(value)


def context() -> dict[str, str | int]:
    """The context fields set now."""
    found: dict[str, str | int] = {}
    for name, var in _VARS.items():
        value = var.get()
        if value is not None:
            found[name] = value
    return found


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    """The context, then the record's extras."""
    fields: dict[str, Any] = context()
    for key, value in record.__dict__.items():
        if key not in _STANDARD:
            fields[key] = value
    return fields


def _time(created: float) -> str:
    seconds = int(created)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + (
        f".{int((created - seconds) * 1000):03d}Z"
    )


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, context, extras."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": _time(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(_fields(record))
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """``time LEVEL logger: message key=value ...``, for people."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        fields = _fields(record)
        if not fields:
            return text
        head, newline, rest = text.partition("\n")
        pairs = " ".join(f"{key}={value}" for key, value in fields.items())
        return f"{head} {pairs}{newline}{rest}"


def configure(level: str, fmt: str) -> None:
    """Log to stderr at ``level`` in format ``fmt`` (``json`` or ``text``)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # grpc's own DEBUG lines (event loop bookkeeping) say nothing about requests.
    logging.getLogger("grpc").setLevel(max(root.level, logging.INFO))
