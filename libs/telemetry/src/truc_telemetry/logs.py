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

A caller chooses much of what is logged (a game name, a request id, a player
id, a header), so no line may carry a character that a terminal or a log
reader acts on. :data:`UNSAFE` are the control characters (C0, DEL, C1), the
Unicode line and paragraph separators and the bidirectional controls; both
formats escape them wherever they occur:

* text: in the message and in every key and value, as ``\\n``, ``\\r``,
  ``\\t``, ``\\xHH`` (``\\x1b``) or ``\\uHHHH`` (``\\u2028``), so one record is
  one line (an exception's traceback follows on lines that all begin with
  spaces, so none can pass for a record); a value is written in double quotes,
  with ``\\`` and ``"`` escaped by a backslash, when it is empty or holds a
  space, ``=``, ``"``, a backslash or an unsafe character (``player="a b"``),
  as logfmt readers expect;
* JSON: the encoder escapes C0, ``"`` and ``\\`` already; DEL, C1, the separators
  and the bidi controls become ``\\uHHHH`` too (the same string once decoded).

Never log a card: actions are logged by kind (a card in a hand is hidden
information, and a card played is in the game's own log already). Never log a
secret: a URL that may carry a password (``REDIS_URL``) goes through
:func:`redacted_url` first.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from contextvars import ContextVar
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "FORMATS",
    "UNSAFE",
    "JsonFormatter",
    "TextFormatter",
    "bind",
    "configure",
    "context",
    "escaped",
    "redacted_url",
    "text_value",
]

FORMATS: Final = ("json", "text")

UNSAFE: Final = frozenset(
    [chr(c) for c in range(0x20)]  # C0: \n, \r, ESC, ...
    + [chr(c) for c in range(0x7F, 0xA0)]  # DEL and C1 (NEL, CSI, ...)
    + ["\u2028", "\u2029"]  # line and paragraph separators
    + ["\u061c", "\u200e", "\u200f"]  # the bidi marks (ALM, LRM, RLM)
    + [chr(c) for c in range(0x202A, 0x202F)]  # bidi embeddings and overrides
    + [chr(c) for c in range(0x2066, 0x206A)]  # bidi isolates
)
"""Characters no log line carries as they are (both formats escape them)."""

_SHORT: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    code = ord(char)
    return _SHORT.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


_TEXT_ESCAPES: Final = str.maketrans({char: _escape(char) for char in UNSAFE})
_QUOTED_ESCAPES: Final = str.maketrans(
    {**{char: _escape(char) for char in UNSAFE}, "\\": "\\\\", '"': '\\"'}
)
_JSON_ESCAPES: Final = str.maketrans(
    {char: f"\\u{ord(char):04x}" for char in UNSAFE if ord(char) >= 0x7F}
)
_QUOTE_IF: Final = UNSAFE | {" ", "=", '"', "\\"}


def escaped(text: str) -> str:
    """``text`` with every :data:`UNSAFE` character written as an escape (``\\n``,
    ``\\x1b``, ``\\u2028``): one line, nothing a terminal acts on."""
    return text.translate(_TEXT_ESCAPES)


def text_value(value: object) -> str:
    """A key's or a value's text in a ``key=value`` pair: as it is when that is
    safe and unambiguous, else in double quotes with ``\\``, ``"`` and every
    :data:`UNSAFE` character escaped."""
    text = str(value)
    if text and _QUOTE_IF.isdisjoint(text):
        return text
    return '"' + text.translate(_QUOTED_ESCAPES) + '"'


def redacted_url(url: str) -> str:
    """``url`` with ``***`` for the password of its user information
    (``redis://:***@host:6379/0``), what a log line or a message may show; any
    other text is returned as it is."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    userinfo, at, host = parts.netloc.rpartition("@")
    user, colon, _ = userinfo.partition(":")
    if not at or not colon:
        return url
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


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
        return json.dumps(line, default=str, ensure_ascii=False).translate(_JSON_ESCAPES)


class TextFormatter(logging.Formatter):
    """``time LEVEL logger: message key=value ...``, for people: one line per
    record, every :data:`UNSAFE` character escaped (a traceback follows on
    lines indented by four spaces)."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - logging's name
        return escaped(super().formatMessage(record))

    def format(self, record: logging.LogRecord) -> str:
        head, _, rest = super().format(record).partition("\n")
        pairs = "".join(
            f" {text_value(key)}={text_value(value)}" for key, value in _fields(record).items()
        )
        if not rest:
            return head + pairs
        lines = (escaped(line) for line in rest.splitlines())
        return head + pairs + "".join(f"\n    {line}" for line in lines)


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
