"""Actions a seat can take, and the vocabulary of calls, signals and directives.

Every action is a small frozen value. Legal-action lists hand out shared
instances (``PLAY[card]``, ``CALL[call]``), so listing them allocates nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from truc_rules.cards import DECK, Card

__all__ = [
    "CALL",
    "CHOOSE_DEALER",
    "DIRECTIVE",
    "EMBIT_OPENINGS",
    "EMBIT_RAISES",
    "PLAY",
    "SIGNAL",
    "TRUC_LADDER",
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
]


class Call(StrEnum):
    """Every call of rules.md §5 and §6, by its upper-case name."""

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


EMBIT_OPENINGS: Final = (Call.EMBIDE, Call.MI_FALTA, Call.RESTOU_Y_TROUCOU)
"""The embit family (§5.1)."""
EMBIT_RAISES: Final = (Call.U_AOUTE, Call.DUS_DE_MES, Call.DETZ_DE_MES, Call.RESTOU)
"""Raises in answer to EMBIDE (§5.4); RESTOU's amount is the rest (§5.6)."""
TRUC_LADDER: Final = (
    Call.TRUC,
    Call.RETRUC,
    Call.BALOU_QUATRO,
    Call.BALOU_SEIZ,
    Call.BALOU_PARTIDO,
)
"""The truc ladder (§6.1); rung ``i`` raises the stake to level ``i + 1``."""


class Signal(StrEnum):
    """A true signal about a card the sender holds (§7.1)."""

    ESPASA = "ESPASA"
    BASTO = "BASTO"
    MANILLA_SW = "MANILLA_SW"
    MANILLA_CO = "MANILLA_CO"
    TRES = "TRES"
    DUS = "DUS"


class Directive(StrEnum):
    """Advice from a captain to the team (§7.1)."""

    LET_THEM_TAKE_IT = "LET_THEM_TAKE_IT"
    PLAY_HIGH = "PLAY_HIGH"
    PLAY_LOW = "PLAY_LOW"
    EMBIDE = "EMBIDE"
    TRUC = "TRUC"
    STAY_QUIET = "STAY_QUIET"


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

PLAY: Final = {card: PlayCard(card) for card in DECK}
CALL: Final = {call: MakeCall(call) for call in Call}
SIGNAL: Final = {signal: SendSignal(signal) for signal in Signal}
DIRECTIVE: Final = {directive: SendDirective(directive) for directive in Directive}
CHOOSE_DEALER: Final = tuple(ChooseDealer(seat) for seat in range(6))
