"""Actions a seat can take, and the vocabulary of calls, signals and directives
of every rule set of the family (each rule set offers its own part of it).

Every action is a small frozen value. Legal-action lists hand out shared
instances (``PLAY[card]``, ``CALL[call]``), so listing them allocates nothing.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from truc_rules.cards import Card

__all__ = [
    "CALL",
    "CHOOSE_DEALER",
    "DIRECTIVE",
    "MAX_MESSAGES",
    "PLAY",
    "SIGNAL",
    "Action",
    "Call",
    "ChooseDealer",
    "CutDeck",
    "Directive",
    "MakeCall",
    "PlayCard",
    "SendDirective",
    "SendSignal",
    "Signal",
    "calls_of",
    "plays_of",
]

MAX_MESSAGES: Final = 64
"""Team messages (signals and directives, both teams) one hand may carry; past
that, a message is refused ``NOT_ALLOWED_NOW``. Far more than play needs, and
what keeps a stored state bounded however often a seat signals."""


class Call(StrEnum):
    """Every call of rules.md §5 and §6 and of variants.md, by its upper-case name.

    New members go at the end: stored games number them in this order.
    """

    EMBIDE = "EMBIDE"
    MI_FALTA = "MI_FALTA"
    RESTOU_Y_TROUCOU = "RESTOU_Y_TROUCOU"
    FLOR = "FLOR"
    PASS = "PASS"
    CANTAR = "CANTAR"
    U_AOUTE = "U_AOUTE"
    DUS_DE_MES = "DUS_DE_MES"
    DETZ_DE_MES = "DETZ_DE_MES"
    RESTOU = "RESTOU"
    FLOR_TAMBIEN = "FLOR_TAMBIEN"
    ALIMIDOU_CON_FLOR = "ALIMIDOU_CON_FLOR"
    ALIMIDOU_CANTAR = "ALIMIDOU_CANTAR"
    ALIBARESTOU_CON_FLOR = "ALIBARESTOU_CON_FLOR"
    TRUC = "TRUC"
    RETRUC = "RETRUC"
    BALOU_QUATRO = "BALOU_QUATRO"
    BALOU_SEIZ = "BALOU_SEIZ"
    BALOU_PARTIDO = "BALOU_PARTIDO"
    ACCEPT = "ACCEPT"
    FOLD = "FOLD"
    RAISE = "RAISE"
    """variants.md V2.3, V3: raise the stake (+2, or double in sackson_truc)."""
    MON_RESTE = "MON_RESTE"
    """V2.4: jump the stake to what the caller still needs; also its answer."""
    PROPOSE_REDEAL = "PROPOSE_REDEAL"
    """V2.5: the non-dealer (eldest) proposes a redeal at its first turn."""
    REFUSE = "REFUSE"
    """V2.5: the dealer refuses a proposed redeal."""


class Signal(StrEnum):
    """A true signal about a card the sender holds (rules.md §7.1, variants.md
    V4.5, V5.4). New members go at the end."""

    ESPASA = "ESPASA"
    BASTO = "BASTO"
    MANILLA_SW = "MANILLA_SW"
    MANILLA_CO = "MANILLA_CO"
    TRES = "TRES"
    """Holds a 3 (Truc y Flou, Catalan Truc)."""
    DUS = "DUS"
    """Holds a 2 (Truc y Flou, Catalan Truc)."""
    SEVEN = "SEVEN"
    """partnership_truc: the governor's partner holds a 7 (a smile)."""
    EIGHT = "EIGHT"
    """partnership_truc: holds an 8 (a wink)."""
    ACE = "ACE"
    """partnership_truc: holds an ace (a shrug)."""
    AS = "AS"
    """catalan_truc: holds an ace (a 1 of the Spanish pack)."""


class Directive(StrEnum):
    """Advice from a captain to the team (rules.md §7.1), or a governor's
    instruction to its partner (variants.md V4.5). New members go at the end."""

    LET_THEM_TAKE_IT = "LET_THEM_TAKE_IT"
    PLAY_HIGH = "PLAY_HIGH"
    PLAY_LOW = "PLAY_LOW"
    EMBIDE = "EMBIDE"
    TRUC = "TRUC"
    STAY_QUIET = "STAY_QUIET"
    PLAY_SEVEN = "PLAY_SEVEN"
    """partnership_truc, binding: play a 7 with your next card if you hold one."""
    LEAVE_IT_TO_ME = "LEAVE_IT_TO_ME"
    """partnership_truc, binding: play one of your lowest cards next."""


@dataclass(frozen=True, slots=True)
class PlayCard:
    card: Card

    def __str__(self) -> str:
        return f"play {self.card}"


@dataclass(frozen=True, slots=True)
class MakeCall:
    call: Call

    def __str__(self) -> str:
        return f"call {self.call}"


@dataclass(frozen=True, slots=True)
class ChooseDealer:
    """The captain who won the draw names the first dealer (§2.4)."""

    dealer: int

    def __str__(self) -> str:
        return f"choose dealer {self.dealer}"


@dataclass(frozen=True, slots=True)
class CutDeck:
    """The cutter cuts the shuffled pack: ``position`` cards go under (1-39)."""

    position: int

    def __str__(self) -> str:
        return f"cut {self.position}"


@dataclass(frozen=True, slots=True)
class SendSignal:
    signal: Signal

    def __str__(self) -> str:
        return f"signal {self.signal}"


@dataclass(frozen=True, slots=True)
class SendDirective:
    directive: Directive

    def __str__(self) -> str:
        return f"directive {self.directive}"


Action = PlayCard | MakeCall | ChooseDealer | CutDeck | SendSignal | SendDirective

PLAY: Final = {card: PlayCard(card) for card in Card}
CALL: Final = {call: MakeCall(call) for call in Call}
SIGNAL: Final = {signal: SendSignal(signal) for signal in Signal}
DIRECTIVE: Final = {directive: SendDirective(directive) for directive in Directive}
CHOOSE_DEALER: Final = tuple(ChooseDealer(seat) for seat in range(6))


@functools.lru_cache(maxsize=4096)
def plays_of(cards: tuple[Card, ...]) -> tuple[PlayCard, ...]:
    """The play actions of some cards, in order (hands repeat: a bounded cache)."""
    return tuple([PLAY[c] for c in cards])


@functools.lru_cache(maxsize=256)
def calls_of(calls: tuple[Call, ...]) -> tuple[MakeCall, ...]:
    """The call actions of some calls, in order (a few dozen combinations occur)."""
    return tuple([CALL[c] for c in calls])
