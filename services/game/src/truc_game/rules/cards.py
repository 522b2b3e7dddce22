"""Cards of the 40-card Spanish pack (rules.md §1.3, §1.4, §3.1, §4.1).

A :class:`Card` is an ``IntEnum`` (0-39, ``suit * 10 + rank``) so that hands are
tuples of small ints and every per-card property is a table look-up. Its text
form is the notation of rules.md: rank then suit, ``7Sw``, ``1Cl``, ``JCo``.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum
from typing import Final

__all__ = [
    "BASTO",
    "DECK",
    "ESPASA",
    "PERIQUES",
    "Card",
    "PeriqueTrickRank",
    "Rank",
    "Suit",
    "declaration_value",
    "parse_cards",
    "trick_class",
]


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

    @property
    def is_perique(self) -> bool:
        return self in PERIQUES

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
ESPASA: Final = Card.SW_1
BASTO: Final = Card.CL_1
PERIQUES: Final = frozenset({Card.CO_J, Card.CL_N})


def parse_cards(texts: list[str] | tuple[str, ...]) -> tuple[Card, ...]:
    """Parse several cards in rules.md notation."""
    return tuple(Card.parse(t) for t in texts)


class PeriqueTrickRank(StrEnum):
    """Rule option ``perique_trick_rank`` (§1.4): where the périques rank in tricks."""

    LOWEST = "lowest"
    """Class 15, below the 4s (the default)."""
    NATURAL = "natural"
    """As the jack (JCo, class 10) and the knight (NCl, class 9) they are."""
    TOP = "top"
    """One class above the Espasa (the Balearic amo and madona)."""


def _trick_classes(perique: PeriqueTrickRank) -> tuple[int, ...]:
    """Class of every card in trick play (§3.1): 1 is the highest."""
    by_rank = {
        Rank.THREE: 5,
        Rank.TWO: 6,
        Rank.KING: 8,
        Rank.KNIGHT: 9,
        Rank.JACK: 10,
        Rank.SIX: 12,
        Rank.FIVE: 13,
        Rank.FOUR: 14,
    }
    named = {
        Card.SW_1: 1,
        Card.CL_1: 2,
        Card.SW_7: 3,
        Card.CO_7: 4,
        Card.CO_1: 7,
        Card.CU_1: 7,
        Card.CL_7: 11,
        Card.CU_7: 11,
    }
    perique_class = {PeriqueTrickRank.LOWEST: 15, PeriqueTrickRank.TOP: 0}.get(perique)
    classes = []
    for card in DECK:
        if card in PERIQUES and perique_class is not None:
            classes.append(perique_class)
        elif card in named:
            classes.append(named[card])
        else:
            classes.append(by_rank[card.rank])
    return tuple(classes)


_TRICK_CLASS: Final = {p: _trick_classes(p) for p in PeriqueTrickRank}


def trick_class(perique: PeriqueTrickRank) -> tuple[int, ...]:
    """The class table for one option value, indexed by card (lower is stronger)."""
    return _TRICK_CLASS[perique]


def _declaration_values(ace_value: int) -> tuple[int, ...]:
    values = []
    for card in DECK:
        if card in PERIQUES:
            values.append(7)
        elif card.rank == Rank.ONE:
            values.append(ace_value)
        elif card.rank >= Rank.JACK:
            values.append(0)
        else:
            values.append(int(card.rank) + 1)
    return tuple(values)


_DECLARATION_VALUE: Final = {0: _declaration_values(0), 1: _declaration_values(1)}


def declaration_value(ace_value: int) -> tuple[int, ...]:
    """Card values for declarations (§4.1), indexed by card, for ``ace_value`` 0 or 1."""
    return _DECLARATION_VALUE[ace_value]
