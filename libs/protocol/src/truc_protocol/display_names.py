"""Display names: what players are called at the table, in any script.

A player's id (:mod:`truc_protocol.identifiers`) is ASCII and stable; the
display name is what people read ("José María", "Ørjan", "山田"). It is chosen
at sign-in, carried in the token's ``name`` claim, and shown beside the seat in
tickets, game views, history and narration. It reaches other players' screens
and every service's logs, so :func:`display_name_problem` refuses what could
forge or hide text there:

* after Unicode NFC normalization and trimming the surrounding white space,
  1-:data:`MAX_DISPLAY_NAME` (32) characters;
* no control character (Unicode category Cc: C0, DEL, C1), no line or paragraph
  separator (Zl, Zp), no surrogate, private-use or unassigned code point;
* no bidirectional control (U+061C, U+200E, U+200F, U+202A-U+202E,
  U+2066-U+2069): a name must not reorder the text after it;
* no other format character (Cf) but the zero-width joiner (U+200D), which
  emoji sequences need.

:func:`normalized_display_name` is the one spelling every service stores.
"""

from __future__ import annotations

import unicodedata
from typing import Final

__all__ = [
    "BAD_DISPLAY_NAME",
    "MAX_DISPLAY_NAME",
    "display_name_problem",
    "normalized_display_name",
]

MAX_DISPLAY_NAME: Final = 32
BAD_DISPLAY_NAME: Final = "BAD_DISPLAY_NAME"
"""INVALID_ARGUMENT: a display name outside the rules above (the message says which)."""

_BIDI_CONTROLS: Final = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
_ALLOWED_FORMAT: Final = frozenset("\u200d")
_REFUSED_CATEGORIES: Final = {
    "Cc": "a control character",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
    "Cs": "a surrogate",
    "Co": "a private-use character",
    "Cn": "an unassigned character",
}


def normalized_display_name(name: str) -> str:
    """``name`` in NFC with its surrounding white space trimmed."""
    return unicodedata.normalize("NFC", name).strip()


def display_name_problem(name: str) -> str | None:
    """Why ``name`` (already :func:`normalized_display_name`) is not a display
    name, in words for an error message; None when it is one."""
    if not name:
        return "a display name needs at least one character"
    if len(name) > MAX_DISPLAY_NAME:
        return f"a display name has at most {MAX_DISPLAY_NAME} characters ({len(name)} given)"
    for char in name:
        point = f"U+{ord(char):04X}"
        if char in _BIDI_CONTROLS:
            return f"a display name may not hold a bidirectional control ({point})"
        category = unicodedata.category(char)
        what = _REFUSED_CATEGORIES.get(category)
        if what is not None:
            return f"a display name may not hold {what} ({point})"
        if category == "Cf" and char not in _ALLOWED_FORMAT:
            return f"a display name may not hold an invisible format character ({point})"
    return None
