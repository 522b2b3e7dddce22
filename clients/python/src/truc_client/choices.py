"""A seat's legal actions as numbered choices, for a human to pick by key.

The moves of the game (cards, calls, naming the dealer, cutting) are numbered
``1``, ``2``...; the team messages, which may be sent at any time of a hand,
are ``s1``, ``s2``... (signals, then a captain's directives), so that a number
is always a move and never a message by accident. The order is the view's own
(``GameView.legal_actions``: cards, then calls, then messages). Each choice's
text is in the words of the view's rule set (:func:`~truc_client.narration.action_text`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from truc.v1 import game_pb2

from .narration import action_text

__all__ = ["Choice", "choices_for", "find_choice"]

_MESSAGE_KINDS: Final = frozenset(("signal", "directive"))


@dataclass(frozen=True, slots=True)
class Choice:
    """One legal action and the key that picks it."""

    key: str
    action: game_pb2.Action
    text: str

    @property
    def is_move(self) -> bool:
        """A move of the game (numbered), not a team message (``s``-numbered)."""
        return not self.key.startswith("s")


def choices_for(view: game_pb2.GameView) -> tuple[Choice, ...]:
    """The viewer's legal actions as choices: moves ``1..n``, then messages ``s1..sm``."""
    moves: list[Choice] = []
    messages: list[Choice] = []
    for action in view.legal_actions:
        if action.WhichOneof("kind") in _MESSAGE_KINDS:
            messages.append(Choice(f"s{len(messages) + 1}", action, action_text(action, view)))
        else:
            moves.append(Choice(str(len(moves) + 1), action, action_text(action, view)))
    return (*moves, *messages)


def find_choice(choices: tuple[Choice, ...], key: str) -> Choice | None:
    """The choice a typed key picks (spaces and case ignored), or None."""
    wanted = "".join(key.split()).lower()
    return next((c for c in choices if c.key == wanted), None)
