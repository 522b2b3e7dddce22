"""Cards of the two packs of the family, shared by the rule sets.

* The 40-card **Spanish pack** (rules.md §1.3): cards 0-39, ``suit * 10 + rank``,
  written rank then suit, ``7Sw``, ``1Cl``, ``JCo``. Truc y Flou and Catalan Truc.
* The 32-card **piquet pack** in French suits (variants.md V2.1, V7): cards
  40-71, written ``7He``, ``TSp``, ``QDi``, ``ACl``. French, Sackson and
  partnership Truc.

A :class:`Card` is an ``IntEnum`` so that hands are tuples of small ints and
every per-card property is a table look-up. The notation is read in a pack: the
text ``7Cl`` is the seven of bastos in the Spanish pack and the seven of clubs
in the piquet pack (:meth:`Deck.parse`). :meth:`Card.parse` reads the Spanish
pack, as it always has.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Final

__all__ = [
    "DECK",
    "PIQUET",
    "PIQUET_CARDS",
    "SPANISH",
    "Card",
    "Deck",
    "Rank",
    "Suit",
    "parse_cards",
]


class Suit(IntEnum):
    """The four suits, in the order used by the card numbering."""

    SWORDS = 0
    CLUBS = 1
    COINS = 2
    CUPS = 3
    HEARTS = 4
    """The French suits of the piquet pack: hearts, diamonds, clubs, spades."""
    DIAMONDS = 5
    FRENCH_CLUBS = 6
    SPADES = 7

    def __str__(self) -> str:
        return _SUIT_TEXT[self]


class Rank(IntEnum):
    """Ranks 1-7, J (sota), N (caballo), K (rey) of the Spanish pack; the piquet
    pack adds 8, 9, T (ten), Q and A (its ace) and shares 7, J and K."""

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
    EIGHT = 10
    NINE = 11
    TEN = 12
    QUEEN = 13
    ACE = 14

    def __str__(self) -> str:
        return _RANK_TEXT[self]


_SUIT_TEXT: Final = ("Sw", "Cl", "Co", "Cu", "He", "Di", "Cl", "Sp")
_RANK_TEXT: Final = ("1", "2", "3", "4", "5", "6", "7", "J", "N", "K", "8", "9", "T", "Q", "A")
_PIQUET_RANKS: Final = (
    Rank.SEVEN,
    Rank.EIGHT,
    Rank.NINE,
    Rank.TEN,
    Rank.JACK,
    Rank.QUEEN,
    Rank.KING,
    Rank.ACE,
)


class Card(IntEnum):
    """One card; member names are ``SUIT_RANK`` (``SW_1`` is the Espasa; ``FC_7``
    is the seven of French clubs, ``HE_A`` the ace of hearts)."""

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
    HE_7 = 40
    HE_8 = 41
    HE_9 = 42
    HE_T = 43
    HE_J = 44
    HE_Q = 45
    HE_K = 46
    HE_A = 47
    DI_7 = 48
    DI_8 = 49
    DI_9 = 50
    DI_T = 51
    DI_J = 52
    DI_Q = 53
    DI_K = 54
    DI_A = 55
    FC_7 = 56
    FC_8 = 57
    FC_9 = 58
    FC_T = 59
    FC_J = 60
    FC_Q = 61
    FC_K = 62
    FC_A = 63
    SP_7 = 64
    SP_8 = 65
    SP_9 = 66
    SP_T = 67
    SP_J = 68
    SP_Q = 69
    SP_K = 70
    SP_A = 71

    @property
    def suit(self) -> Suit:
        return _SUITS[self]

    @property
    def rank(self) -> Rank:
        return _RANKS[self]

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


_SUITS: Final = (
    *(Suit(i // 10) for i in range(40)),
    *(Suit(4 + i // 8) for i in range(32)),
)
_RANKS: Final = (*(Rank(i % 10) for i in range(40)), *(_PIQUET_RANKS[i % 8] for i in range(32)))
_CARD_TEXT: Final = tuple(
    _RANK_TEXT[r] + _SUIT_TEXT[s] for r, s in zip(_RANKS, _SUITS, strict=True)
)
_BY_TEXT: Final = {text: Card(i) for i, text in enumerate(_CARD_TEXT[:40])}


class Deck:
    """One pack: its cards in numbering order, and its reading of the notation."""

    __slots__ = ("_by_text", "_members", "cards", "name", "rank_text")

    def __init__(self, name: str, cards: tuple[Card, ...]) -> None:
        self.name = name
        self.cards = cards
        self._by_text = {str(card): card for card in cards}
        self._members = frozenset(cards)
        self.rank_text = "/".join(dict.fromkeys(_RANK_TEXT[c.rank] for c in cards))

    def __contains__(self, card: object) -> bool:
        return card in self._members

    def __repr__(self) -> str:
        return f"Deck({self.name!r})"

    def parse(self, text: str) -> Card:
        """Parse a card of this pack; raise ``ValueError`` for any other text."""
        card = self._by_text.get(text)
        if card is None:
            raise ValueError(f"not a card of the {self.name} pack: {text!r}")
        return card

    def read(self, text: str) -> Card | None:
        """The card of this pack ``text`` names, else the card of the other pack
        it names (a card of another deck: the engine refuses it as not in hand),
        else None (no card at all)."""
        return self._by_text.get(text) or _ANY_TEXT.get(text)


DECK: Final = tuple(Card)[:40]
"""The 40 cards of the Spanish pack in numbering order."""
PIQUET_CARDS: Final = tuple(Card)[40:]
SPANISH: Final = Deck("Spanish", DECK)
"""The Spanish pack (rules.md §1.3)."""
PIQUET: Final = Deck("piquet", PIQUET_CARDS)
"""The 32-card piquet pack in French suits (variants.md V2.1)."""
_ANY_TEXT: Final = {**{str(c): c for c in PIQUET_CARDS}, **_BY_TEXT}


def parse_cards(texts: list[str] | tuple[str, ...], deck: Deck = SPANISH) -> tuple[Card, ...]:
    """Parse several cards of ``deck`` (the Spanish pack unless said)."""
    return tuple(deck.parse(t) for t in texts)
