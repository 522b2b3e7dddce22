"""The game service's use cases on the in-memory ports, for the pure use-case
tests (test_use_cases, test_history, test_session_unit): one place that
builds the service and a game's request."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from truc_game.adapters.memory import MemoryGameStore
from truc_game.ports import VersionFeed
from truc_game.service import GameService, NewGame
from truc_rules.truc_y_flou import RuleOptions
from truc_service.tokens import Identity

PLAYERS = ("ana", "bruno", "carla", "dani", "eva", "fede")
LOBBY = Identity("truc-lobby", "lobby", 1e12)


def player(name: str) -> Identity:
    return Identity(name, "player", 1e12)


def game_service(
    store: MemoryGameStore,
    *,
    clock: Callable[[], float] = time.time,
    feed: VersionFeed | None = None,
    rate_actions: int = 0,
    rate_signals: int = 0,
) -> GameService:
    """The use cases over ``store`` (no rate limit unless given)."""
    return GameService(
        store,
        turn_seconds=30,
        allow_fixed_deals=False,
        rate_actions=rate_actions,
        rate_signals=rate_signals,
        rate_window_ms=1000,
        feed=feed,
        clock=clock,
    )


def new_game(**changes: Any) -> NewGame:
    """CreateGame's request for game g1 of the six PLAYERS (Truc y Flou)."""
    fields: dict[str, Any] = {
        "game_id": "g1",
        "players": PLAYERS,
        "options": RuleOptions(),
        "turn_seconds": 0,
        "dealer": None,
        "fixed_deals": (),
        "start_scores": (0, 0),
        "start_manches": (0, 0),
    }
    fields.update(changes)
    return NewGame(**fields)
