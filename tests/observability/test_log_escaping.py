"""Both log formats escape what a caller could use to forge a line or drive a
terminal: control characters, line separators, bidi controls (unit tests of the
formatters; test_log_injection.py sends such values to a real game service)."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator

import pytest

from truc_telemetry import logs

pytestmark = pytest.mark.unit

HOSTILE = (
    "x\n2026-01-01 00:00:00,000 INFO truc.game: forged\r\x1b[2J\x1b]0;t\x07"
    "\x00\x7f\x85\x9b\u2028\u2029\u202e\u2066\u200f"
)
"""A forged line, ANSI screen clear and title, NUL, DEL, C1 (NEL, CSI), the line
and paragraph separators, a right-to-left override, an isolate, a mark."""


@pytest.fixture(autouse=True)
def _no_context() -> Iterator[None]:
    yield
    logs.bind(request_id=None, game=None, player=None, seat=None, ticket=None, method=None)


def record(message: str = "%s", *args: object, **extra: object) -> logging.LogRecord:
    made = logging.LogRecord("truc.game", logging.INFO, __file__, 1, message, args, None)
    made.__dict__.update(extra)
    return made


def unsafe_in(text: str) -> set[str]:
    return {char for char in text if char in logs.UNSAFE}


def test_the_unsafe_set_covers_controls_separators_and_bidi() -> None:
    for code in [*range(0x20), *range(0x7F, 0xA0)]:
        assert chr(code) in logs.UNSAFE, hex(code)
    for (
        char
    ) in "\u2028\u2029\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069":
        assert char in logs.UNSAFE, hex(ord(char))
    # Every character str.splitlines() breaks on is among them.
    assert {c for c in map(chr, range(0x3000)) if len(f"a{c}b".splitlines()) > 1} <= logs.UNSAFE
    assert not logs.UNSAFE & set('azAZ09 -_="\\é€ü')


def test_text_escapes_every_unsafe_character_in_message_and_values() -> None:
    logs.bind(request_id=HOSTILE, player="p\x1bq", game="g\u2028h")
    line = logs.TextFormatter().format(record("said %s", HOSTILE, kind=HOSTILE))
    assert "\n" not in line and not unsafe_in(line)
    assert len(line.splitlines()) == 1
    assert (
        "said x\\n2026-01-01 00:00:00,000 INFO truc.game: forged\\r\\x1b[2J\\x1b]0;t\\x07" in line
    )
    assert "\\x00\\x7f\\x85\\x9b\\u2028\\u2029\\u202e\\u2066\\u200f" in line
    assert ' player="p\\x1bq"' in line and ' game="g\\u2028h"' in line
    assert ' request_id="x\\n2026-01-01' in line and ' kind="x\\n2026' in line


def test_text_quotes_values_with_spaces_equals_quotes_or_backslashes() -> None:
    line = logs.TextFormatter().format(
        record(
            "m",
            plain="abc-1",
            spaced="a b",
            assigns="k=v",
            quoted='say "hi"',
            slashed="a\\b",
            empty="",
            number=3,
            players=["a", "b"],
        )
    )
    pairs = line.split(": m ", 1)[1]
    assert pairs == (
        'plain=abc-1 spaced="a b" assigns="k=v" quoted="say \\"hi\\"" slashed="a\\\\b"'
        " empty=\"\" number=3 players=\"['a', 'b']\""
    )


def test_a_forged_pair_stays_inside_its_value() -> None:
    logs.bind(player='bob" admin="1')
    line = logs.TextFormatter().format(record("m"))
    assert line.endswith(' player="bob\\" admin=\\"1"')


def test_a_traceback_follows_on_indented_lines_only() -> None:
    try:
        raise ValueError(HOSTILE)
    except ValueError:
        failed = logging.LogRecord(
            "truc.game", logging.ERROR, __file__, 1, "boom %s", (HOSTILE,), sys.exc_info()
        )
    head, *rest = logs.TextFormatter().format(failed).split("\n")
    assert head.split(" ", 2)[2].startswith("ERROR truc.game: boom x\\n2026")
    assert rest and all(line.startswith("    ") for line in rest)
    assert rest[0] == "    Traceback (most recent call last):"
    assert not unsafe_in("\n".join(rest).replace("\n", ""))


def test_json_keeps_one_object_per_line_and_the_same_strings() -> None:
    logs.bind(request_id=HOSTILE)
    line = logs.JsonFormatter().format(record("said %s", HOSTILE, kind=HOSTILE))
    assert not unsafe_in(line) and len(line.splitlines()) == 1
    assert "\\u2028" in line and "\\u009b" in line and "\\u202e" in line and "\\u001b" in line
    decoded = json.loads(line)
    assert decoded["message"] == f"said {HOSTILE}"
    assert decoded["request_id"] == decoded["kind"] == HOSTILE
    # Other characters are written as they are (ensure_ascii stays off).
    assert '"é€"' in logs.JsonFormatter().format(record("%s", "é€"))
