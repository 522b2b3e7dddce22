"""The safe alphabets of the identifiers a caller chooses: player ids, request ids, game ids.

Both reach other players' views, the services' logs and Redis keys, so they are
limited to characters that need no escaping anywhere: ASCII letters and digits
and a few separators, never a space, a quote, a backslash, ``=`` or a control
character. Every entry point checks them with these functions (CreateGame's
players, a token's ``sub``, SubmitAction's and a session's ``request_id``, the
lobby's guest ids), and the message of a refusal shows the alphabet:

* a **player id** is 1-128 of ``A-Z a-z 0-9 _ . : @ | + -`` (``|`` and ``+``
  for identity providers' subjects such as ``auth0|5f...``);
* a **request id** is 0-64 of ``A-Z a-z 0-9 _ . : -`` (empty: no retry
  protection; a UUID in any of its usual spellings fits);
* a **game id** is 1-64 of ``A-Z a-z 0-9 _ -``, and a game's resource name is
  ``games/{game}`` (:func:`parse_game_name`: the game service, the lobby's
  spectator grants, a grant's ``game`` claim).
"""

from __future__ import annotations

import re
from typing import Final

from truc_protocol.errors import InvalidArgument

__all__ = [
    "GAME_NAME_PREFIX",
    "MAX_PLAYER_ID",
    "MAX_REQUEST_ID",
    "PLAYER_ID_ALPHABET",
    "REQUEST_ID_ALPHABET",
    "game_id_of",
    "game_name",
    "parse_game_name",
    "valid_game_id",
    "valid_player_id",
    "valid_request_id",
]

MAX_PLAYER_ID: Final = 128
MAX_REQUEST_ID: Final = 64
PLAYER_ID_ALPHABET: Final = "A-Z a-z 0-9 _ . : @ | + -"
"""The player id alphabet, for people (error messages and docs)."""
REQUEST_ID_ALPHABET: Final = "A-Z a-z 0-9 _ . : -"
"""The request id alphabet, for people (error messages and docs)."""

_PLAYER_ID: Final = re.compile(rf"[A-Za-z0-9_.:@|+\-]{{1,{MAX_PLAYER_ID}}}")
_REQUEST_ID: Final = re.compile(rf"[A-Za-z0-9_.:\-]{{0,{MAX_REQUEST_ID}}}")
_GAME_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
GAME_NAME_PREFIX: Final = "games/"


def valid_player_id(player: str) -> bool:
    """Whether ``player`` is 1-128 characters of :data:`PLAYER_ID_ALPHABET`."""
    return _PLAYER_ID.fullmatch(player) is not None


def valid_request_id(request_id: str) -> bool:
    """Whether ``request_id`` is 0-64 characters of :data:`REQUEST_ID_ALPHABET`."""
    return _REQUEST_ID.fullmatch(request_id) is not None


def valid_game_id(game_id: str) -> bool:
    """Whether ``game_id`` is 1-64 of ``A-Z a-z 0-9 _ -``."""
    return _GAME_ID.fullmatch(game_id) is not None


def game_name(game_id: str) -> str:
    """The resource name ``games/{game}`` of ``game_id``."""
    return GAME_NAME_PREFIX + game_id


def game_id_of(name: str) -> str | None:
    """The game id of the resource name ``games/{game}``; None if ``name`` is not one."""
    if not name.startswith(GAME_NAME_PREFIX):
        return None
    game_id = name[len(GAME_NAME_PREFIX) :]
    return game_id if valid_game_id(game_id) else None


def parse_game_name(name: str) -> str:
    """The game id in ``games/{game}``; INVALID_ARGUMENT (BAD_NAME) otherwise."""
    game_id = game_id_of(name)
    if game_id is None:
        raise InvalidArgument(
            "BAD_NAME",
            f"name must be 'games/<id>' (id: 1-64 of A-Z a-z 0-9 _ -), not {name[:80]!r}",
        )
    return game_id
