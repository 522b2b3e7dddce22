"""Truc y Flou's ranking of the Spanish pack: the trick order (rules.md §1.4,
§3.1), the named cards (the Espasa, the Basto, the périques) and the card values
of declarations (§4.1).

The one home of the §3.1 trick order: the engine, the bots and the lobby read
:func:`trick_class`; nothing else writes it down.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from truc_rules.cards import DECK, Card, Rank

__all__ = [
    "BASTO",
    "ESPASA",
    "PERIQUES",
    "PeriqueTrickRank",
    "declaration_value",
    "trick_class",
]

ESPASA: Final = Card.SW_1
BASTO: Final = Card.CL_1
PERIQUES: Final = frozenset({Card.CO_J, Card.CL_N})


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
