"""Truc y Flou (rules.md), the default rule set of truc-rules.

No I/O, no clock, no global randomness: time and seeds are parameters.
Hidden information leaves the engine only through :func:`view_for`.

Typical use::

    t = new_game(RuleOptions(), seed=42)
    state = t.state
    seat = to_act(state)
    t = apply_action(state, seat, legal_actions(state, seat)[0])
    view = view_for(t.state, seat, t.events)
"""

from truc_rules.cards import DECK, Card, Rank, Suit, parse_cards
from truc_rules.errors import IllegalAction, InvalidSetup, Reason, TrucError

from .actions import (
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
from .codec import decode_state, encode_state
from .declarations import embit_value, flor_value, has_flor
from .engine import Transition, apply_action, is_terminal, legal_actions, new_game, to_act
from .options import CutMode, Responder, RuleOptions
from .ranking import PeriqueTrickRank
from .state import GameState, Phase, Prompt
from .views import GameView, view_for

__all__ = [
    "DECK",
    "Action",
    "Call",
    "Card",
    "ChooseDealer",
    "CutDeck",
    "CutMode",
    "Directive",
    "GameState",
    "GameView",
    "IllegalAction",
    "InvalidSetup",
    "MakeCall",
    "PeriqueTrickRank",
    "Phase",
    "PlayCard",
    "Prompt",
    "Rank",
    "Reason",
    "Responder",
    "RuleOptions",
    "SendDirective",
    "SendSignal",
    "Signal",
    "Suit",
    "Transition",
    "TrucError",
    "apply_action",
    "decode_state",
    "embit_value",
    "encode_state",
    "flor_value",
    "has_flor",
    "is_terminal",
    "legal_actions",
    "new_game",
    "parse_cards",
    "to_act",
    "view_for",
]
