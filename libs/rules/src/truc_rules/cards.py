"""Cards of the 40-card Spanish pack (rules.md §1.3), shared by the rule sets.

A :class:`Card` is an ``IntEnum`` (0-39, ``suit * 10 + rank``) so that hands are
tuples of small ints and every per-card property is a table look-up. Its text
form is the notation of rules.md: rank then suit, ``7Sw``, ``1Cl``, ``JCo``.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Final

__all__ = ["DECK", "Card", "Rank", "Suit", "parse_cards"]


class Suit(IntEnum):
    """The four suits, in the order used by the card numbering."""

    SWORDS = 0
    CLUBS = 1
    COINS = 2
    CUPS = 3

    def __str__(self) -> str:
        return _SUIT_TEXT[self]


class Rank(IntEnum):
    """Ranks 1-7, J (sota), N (caballo), K (rey)."""

    ONE = 0
    TWO = 1
    THREE = 2
    FOUR = 3
    FIVE = 4
    SIX = 5
    SEVEN = 6
    JACK = 7
    KNIGHT = 8
    KING = 9

    def __str__(self) -> str:
        return _RANK_TEXT[self]


_SUIT_TEXT: Final = ("Sw", "Cl", "Co", "Cu")
_RANK_TEXT: Final = ("1", "2", "3", "4", "5", "6", "7", "J", "N", "K")


class Card(IntEnum):
    """One card; member names are ``SUIT_RANK`` (``SW_1`` is the Espasa)."""

    SW_1 = 0
    SW_2 = 1
    SW_3 = 2
    SW_4 = 3
    SW_5 = 4
    SW_6 = 5
    SW_7 = 6
    SW_J = 7
    SW_N = 8
    SW_K = 9
    CL_1 = 10
    CL_2 = 11
    CL_3 = 12
    CL_4 = 13
    CL_5 = 14
    CL_6 = 15
    CL_7 = 16
    CL_J = 17
    CL_N = 18
    CL_K = 19
    CO_1 = 20
    CO_2 = 21
    CO_3 = 22
    CO_4 = 23
    CO_5 = 24
    CO_6 = 25
    CO_7 = 26
    CO_J = 27
    CO_N = 28
    CO_K = 29
    CU_1 = 30
    CU_2 = 31
    CU_3 = 32
    CU_4 = 33
    CU_5 = 34
    CU_6 = 35
    CU_7 = 36
    CU_J = 37
    CU_N = 38
    CU_K = 39

    @property
    def suit(self) -> Suit:
        return Suit(self // 10)

    @property
    def rank(self) -> Rank:
        return Rank(self % 10)

    def __str__(self) -> str:
        return _CARD_TEXT[self]

    def __format__(self, spec: str) -> str:
        return format(_CARD_TEXT[self], spec)

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse rules.md notation (``"7Sw"``); raise ``ValueError`` otherwise."""
        card = _BY_TEXT.get(text)
        if card is None:
            raise ValueError(f"not a card: {text!r} (expected rank 1-7/J/N/K then Sw/Cl/Co/Cu)")
        return card


_CARD_TEXT: Final = tuple(r + s for s in _SUIT_TEXT for r in _RANK_TEXT)
_BY_TEXT: Final = {text: Card(i) for i, text in enumerate(_CARD_TEXT)}

DECK: Final = tuple(Card)
"""The 40 cards in numbering order."""


def parse_cards(texts: list[str] | tuple[str, ...]) -> tuple[Card, ...]:
    """Parse several cards in rules.md notation."""
    return tuple(Card.parse(t) for t in texts)
