"""A seat's legal actions as numbered choices, for a human to pick by key.

The moves of the game (cards, calls, naming the dealer, cutting) are numbered
``1``, ``2``...; the team messages, which may be sent at any time of a hand,
are ``s1``, ``s2``... (signals, then a captain's directives), so that a number
is always a move and never a message by accident. The order is the view's own:
``GameView.legal_moves`` then ``legal_messages`` from a service that sends them
(the moves only at the viewer's turn), else ``legal_actions`` split by kind
(cards, then calls, then messages). Each choice's text is in the words of the
view's rule set (:func:`~truc_client.narration.action_text`), and its
``explanation`` says what it does and risks
(:func:`~truc_client.explanations.explain`: ``?`` in terminal play).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from truc.v1 import game_pb2

from .explanations import explain
from .narration import action_text

__all__ = ["Choice", "choices_for", "find_choice"]

_MESSAGE_KINDS: Final = frozenset(("signal", "directive"))


@dataclass(frozen=True, slots=True)
class Choice:
    """One legal action and the key that picks it."""

    key: str
    action: game_pb2.Action
    text: str
    explanation: str = ""
    """What it does and what it risks or scores, in one line."""

    @property
    def is_move(self) -> bool:
        """A move of the game (numbered), not a team message (``s``-numbered)."""
        return not self.key.startswith("s")


def choices_for(view: game_pb2.GameView) -> tuple[Choice, ...]:
    """The viewer's legal actions as choices: moves ``1..n``, then messages ``s1..sm``."""
    if view.legal_moves or view.legal_messages:
        move_actions = list(view.legal_moves)
        message_actions = list(view.legal_messages)
    else:  # a service that predates the split: one list, told apart by kind
        move_actions = [a for a in view.legal_actions if a.WhichOneof("kind") not in _MESSAGE_KINDS]
        message_actions = [a for a in view.legal_actions if a.WhichOneof("kind") in _MESSAGE_KINDS]
    moves = [_choice(str(i), action, view) for i, action in enumerate(move_actions, 1)]
    messages = [_choice(f"s{i}", action, view) for i, action in enumerate(message_actions, 1)]
    return (*moves, *messages)


def _choice(key: str, action: game_pb2.Action, view: game_pb2.GameView) -> Choice:
    return Choice(key, action, action_text(action, view), explain(action, view))


def find_choice(choices: tuple[Choice, ...], key: str) -> Choice | None:
    """The choice a typed key picks (spaces and case ignored), or None."""
    wanted = "".join(key.split()).lower()
    return next((c for c in choices if c.key == wanted), None)
