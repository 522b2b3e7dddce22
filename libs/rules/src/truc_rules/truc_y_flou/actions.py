"""Truc y Flou's part of the shared vocabulary (:mod:`truc_rules.actions`): the
action types, and the calls, signals and directives this rule set offers."""

from __future__ import annotations

from typing import Final

from truc_rules.actions import (
    CALL,
    CHOOSE_DEALER,
    DIRECTIVE,
    PLAY,
    SIGNAL,
    Action,
    Call,
    ChooseDealer,
    CutDeck,
    Directive,
    MakeCall,
    PlayCard,
    SendDirective,
    SendSignal,
    Signal,
)

__all__ = [
    "CALL",
    "CALLS",
    "CHOOSE_DEALER",
    "DIRECTIVE",
    "DIRECTIVES",
    "EMBIT_OPENINGS",
    "EMBIT_RAISES",
    "PLAY",
    "SIGNAL",
    "SIGNALS",
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

CALLS: Final = tuple(Call)[: tuple(Call).index(Call.FOLD) + 1]
"""The calls of rules.md §5 and §6, in their stored order (EMBIDE … FOLD)."""
SIGNALS: Final = (
    Signal.ESPASA,
    Signal.BASTO,
    Signal.MANILLA_SW,
    Signal.MANILLA_CO,
    Signal.TRES,
    Signal.DUS,
)
"""The signals of §7.1, in their stored order."""
DIRECTIVES: Final = (
    Directive.LET_THEM_TAKE_IT,
    Directive.PLAY_HIGH,
    Directive.PLAY_LOW,
    Directive.EMBIDE,
    Directive.TRUC,
    Directive.STAY_QUIET,
)
"""The directives of §7.1, in their stored order."""

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
