"""Test helpers: build games from fixed deals and play actions written like scenarios."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from truc_client.scenarios import parse_action
from truc_rules import Card, GameState, RuleOptions, apply_action, new_game

# A deal with no flor and no Espasa/Basto, used where the cards do not matter.
PLAIN_DEAL = (
    ("2Co", "5Sw", "KCu"),
    ("3Sw", "4Co", "6Cu"),
    ("3Co", "4Sw", "7Cu"),
    ("2Sw", "5Cu", "KCo"),
    ("6Sw", "7Cl", "4Cu"),
    ("6Co", "KSw", "5Cl"),
)


def deal(*hands: Sequence[str]) -> tuple[tuple[Card, ...], ...]:
    return tuple(tuple(Card.parse(c) for c in hand) for hand in hands)


def start(
    hands: Sequence[Sequence[str]] = PLAIN_DEAL,
    *,
    more: Sequence[Sequence[Sequence[str]]] = (),
    dealer: int = 5,
    scores: tuple[int, int] = (0, 0),
    manches: tuple[int, int] = (0, 0),
    options: RuleOptions | None = None,
) -> GameState:
    deals = [deal(*hands), *(deal(*h) for h in more)]
    return new_game(options, deals=deals, dealer=dealer, scores=scores, manches=manches).state


def play(state: GameState, *steps: dict[str, Any]) -> GameState:
    """Apply scenario-style steps (``{"seat": 0, "call": "TRUC"}``); each must be legal."""
    for index, raw in enumerate(steps):
        step = parse_action(raw, index)
        state = apply_action(state, step.seat, step.action).state
    return state


def seq(text: str) -> list[dict[str, Any]]:
    """Steps from a compact string: ``"0:TRUC 3:FOLD 0:2Co"`` (calls upper case, else cards)."""
    steps: list[dict[str, Any]] = []
    for token in text.split():
        seat, what = token.split(":")
        key = "call" if what.isupper() and len(what) > 3 else "play"
        steps.append({"seat": int(seat), key: what})
    return steps
