"""Resource names (``games/{game}``) and game ids: the protocol's definitions
(:mod:`truc_protocol.identifiers`), and the game service's fresh ids."""

from __future__ import annotations

import secrets

from truc_protocol.identifiers import game_name, parse_game_name, valid_game_id

__all__ = ["game_name", "new_game_id", "parse_game_name", "valid_game_id"]


def new_game_id() -> str:
    """A fresh random id: 16 URL-safe characters (96 bits)."""
    return secrets.token_urlsafe(12)
