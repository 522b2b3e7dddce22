"""Declaration values (rules.md §4): embit, flor, and showdown keys.

Values are always computed from the three cards dealt to a seat (§4.6), so
nobody can announce a false count. A périque counts 7 and takes whatever suit
suits the hand best, even duplicating a 7 already held (§4.2).
"""

from __future__ import annotations

from functools import cache
from itertools import combinations

from truc_rules.cards import Card

from .ranking import PERIQUES, declaration_value

__all__ = [
    "Declaration",
    "embit",
    "embit_value",
    "flor",
    "flor_value",
    "hand_values",
    "has_flor",
    "showdown_key",
]

Declaration = tuple[int, tuple[Card, ...]]
"""A value and the cards that make it (shown at a showdown)."""


def _suited(a: Card, b: Card) -> bool:
    return a in PERIQUES or b in PERIQUES or a // 10 == b // 10


def embit(cards: tuple[Card, ...], ace_value: int = 0) -> Declaration | None:
    """The best embit of a hand (§4.3): two cards of one suit, values + 20; None if none."""
    values = declaration_value(ace_value)
    best: Declaration | None = None
    for a, b in combinations(cards, 2):
        if _suited(a, b):
            value = values[a] + values[b] + 20
            if best is None or value > best[0]:
                best = (value, (a, b))
    return best


def flor(cards: tuple[Card, ...], ace_value: int = 0) -> Declaration | None:
    """The flor of a three-card hand (§4.4): three cards of one suit, values + 20."""
    if len(cards) != 3:
        return None
    plain = [c for c in cards if c not in PERIQUES]
    if len({c // 10 for c in plain}) > 1:
        return None
    values = declaration_value(ace_value)
    return (sum(values[c] for c in cards) + 20, tuple(cards))


def embit_value(cards: tuple[Card, ...], ace_value: int = 0) -> int | None:
    found = embit(cards, ace_value)
    return None if found is None else found[0]


def flor_value(cards: tuple[Card, ...], ace_value: int = 0) -> int | None:
    found = flor(cards, ace_value)
    return None if found is None else found[0]


@cache
def hand_values(cards: tuple[Card, ...], ace_value: int = 0) -> tuple[int | None, int | None]:
    """(embit value, flor value) of a dealt hand, memoised (there are 9,880 hands)."""
    return embit_value(cards, ace_value), flor_value(cards, ace_value)


@cache
def has_flor(cards: tuple[Card, ...]) -> bool:
    return len(cards) == 3 and len({c // 10 for c in cards if c not in PERIQUES}) <= 1


def showdown_key(cards: tuple[Card, ...], ace_value: int = 0) -> tuple[int, int, tuple[Card, ...]]:
    """A seat's strength in an embit showdown (§4.5): ``(1, embit)`` if it has one,
    else ``(0, its highest single card value)``, with the cards that show it."""
    found = embit(cards, ace_value)
    if found is not None:
        return (1, found[0], found[1])
    values = declaration_value(ace_value)
    high = max(cards, key=lambda c: values[c])
    return (0, values[high], (high,))
