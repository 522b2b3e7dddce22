"""Errors of the rules engine.

Exception tree::

    TrucError                 base of everything the engine raises on purpose
    ├── IllegalAction         an action refused by the rules; carries a Reason;
    │                         the state it was applied to is unchanged
    └── InvalidSetup          a game that cannot be created (bad options, deals,
                              scores), or a stored state that cannot be decoded

:class:`Reason` values are the machine-readable reasons of
``shared/spec/scenarios.md`` and, later, of the gRPC ``ErrorInfo.reason``.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["IllegalAction", "InvalidSetup", "Reason", "TrucError"]


class Reason(StrEnum):
    """Why an action was refused."""

    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    """Another seat is expected to act (or no seat is: the deals ran out)."""
    CARD_NOT_IN_HAND = "CARD_NOT_IN_HAND"
    """The card is not in the acting seat's hand."""
    NO_FLOR = "NO_FLOR"
    """A flor declaration (FLOR, FLOR_TAMBIEN) by a seat that holds no flor."""
    NOT_ALLOWED_NOW = "NOT_ALLOWED_NOW"
    """Any other action that is not legal at this moment."""
    GAME_OVER = "GAME_OVER"
    """The match is over."""


class TrucError(Exception):
    """Base class of the engine's errors."""


class IllegalAction(TrucError):
    """An action the rules refuse. The state it was applied to is unchanged."""

    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class InvalidSetup(TrucError):
    """A game that cannot be created or decoded as asked."""
