"""Resource names (``games/{game}``) and game ids."""

from __future__ import annotations

import re
import secrets
from typing import Final

from truc_protocol.errors import InvalidArgument

__all__ = ["game_name", "new_game_id", "parse_game_name", "valid_game_id"]

_GAME_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
PREFIX: Final = "games/"


def valid_game_id(game_id: str) -> bool:
    return _GAME_ID.fullmatch(game_id) is not None


def new_game_id() -> str:
    """A fresh random id: 16 URL-safe characters (96 bits)."""
    return secrets.token_urlsafe(12)


def game_name(game_id: str) -> str:
    return PREFIX + game_id


def parse_game_name(name: str) -> str:
    """The game id in ``games/{game}``; INVALID_ARGUMENT (BAD_NAME) otherwise."""
    if not name.startswith(PREFIX) or not valid_game_id(name[len(PREFIX) :]):
        raise InvalidArgument(
            "BAD_NAME",
            f"name must be 'games/<id>' (id: 1-64 of A-Z a-z 0-9 _ -), not {name[:80]!r}",
        )
    return name[len(PREFIX) :]
