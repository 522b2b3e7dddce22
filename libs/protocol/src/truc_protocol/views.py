"""Reading a ``truc.v1.GameView``: what every client and bot asks of one."""

from __future__ import annotations

from typing import Final

from truc.v1 import game_pb2

__all__ = ["game_version", "is_over"]

_TERMINAL: Final = frozenset((game_pb2.PHASE_MATCH_OVER, game_pb2.PHASE_NO_DEAL))


def game_version(view: game_pb2.GameView) -> int:
    """A view's game version (its etag is the version; 0 if it has none)."""
    return int(view.etag) if view.etag.isdigit() else 0


def is_over(view: game_pb2.GameView) -> bool:
    """Nothing more will happen in the game: the match is over (or a test game's
    fixed deals ran out)."""
    return view.finished or view.phase in _TERMINAL
