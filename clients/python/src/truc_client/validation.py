"""Pydantic validation errors as one line that names each field at fault.

The JSON documents the ``truc`` command reads (scenario files, load reports)
are validated with pydantic models; :func:`describe` turns the
:class:`pydantic.ValidationError` into the notation of the document
(``actions[3].seat: must be an integer, not "3"``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from pydantic import ValidationError
from pydantic_core import ErrorDetails

__all__ = ["describe", "json_text", "where"]

_TYPES: Final = {
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "dict_type": "must be an object",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "int_type": "must be an integer",
    "float_type": "must be a number",
    "string_type": "must be a string",
    "bool_type": "must be true or false",
}
_SHOWN: Final = 3
"""Errors spelled out in one line (the rest are counted)."""


def json_text(value: object) -> str:
    """A value as the document writes it (shortened)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def where(loc: tuple[int | str, ...]) -> str:
    """``("actions", 3, "seat")`` -> ``actions[3].seat``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _message(error: ErrorDetails, unknown: Mapping[str, str]) -> str:
    kind, loc = error["type"], error["loc"]
    ctx = error.get("ctx", {})
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    if kind == "extra_forbidden":
        return unknown.get(where(loc[:-1]), "unknown field")
    if kind == "missing":
        return "missing (required)"
    if kind in ("too_short", "too_long"):
        size = ctx.get("min_length" if kind == "too_short" else "max_length")
        return f"must hold {size} items, not {ctx.get('actual_length')}"
    text = _TYPES.get(kind, str(error["msg"]))
    value = error["input"]
    if isinstance(value, str | int | float | bool) or value is None:
        return f"{text}, not {json_text(value)}"
    return text


def describe(
    exc: ValidationError,
    prefix: tuple[int | str, ...] = (),
    *,
    unknown: Mapping[str, str] | None = None,
) -> tuple[str, str]:
    """(the first field at fault, the message naming every field at fault).

    ``prefix`` is where the validated value sits in its document; ``unknown``
    says, by the object's path, what an unknown key there is ("unknown field").
    """
    lines = [(where(prefix + tuple(e["loc"])), _message(e, unknown or {})) for e in exc.errors()]
    (first, message), rest = lines[0], lines[1:_SHOWN]
    message += "".join(f"; {w}: {m}" if w else f"; {m}" for w, m in rest)
    if len(lines) > _SHOWN:
        message += f"; and {len(lines) - _SHOWN} more"
    return first, message
