"""Partnership Truc with governors (variants.md V4): four players.

As French Truc, with seats 0, 2 against 1, 3. Each hand the dealer governs
its side and eldest the other: only governors answer raises and ``MON_RESTE``
and concede; only eldest proposes a redeal and only the dealer answers it.
Partners' tied top cards win for a side that led the trick, else spoil it
(V4.4). The governor's partner signals ``SEVEN``, ``EIGHT``, ``ACE`` honestly;
the governor's ``PLAY_SEVEN``, ``PLAY_LOW`` and ``LEAVE_IT_TO_ME`` bind the
partner's next card.
"""

from __future__ import annotations

from typing import Final

from truc_rules.actions import Directive, Signal
from truc_rules.cards import PIQUET, Rank
from truc_rules.family import (
    FamilyOptions,
    FamilyRules,
    FamilyState,
    FamilyView,
    Ladder,
    PartnerTie,
    Transition,
    TrickOrder,
    Variant,
    apply_action,
    default_action,
    encode_state,
    is_terminal,
    legal_actions,
    to_act,
    view_for,
)
from truc_rules.rule_set import RuleSet

__all__ = [
    "RULES",
    "VARIANT",
    "FamilyOptions",
    "FamilyState",
    "FamilyView",
    "Transition",
    "apply_action",
    "decode_state",
    "default_action",
    "encode_state",
    "is_terminal",
    "legal_actions",
    "new_game",
    "options",
    "options_from_mapping",
    "to_act",
    "view_for",
]

_SEVEN_EIGHT: Final = (
    Rank.SEVEN,
    Rank.EIGHT,
    Rank.ACE,
    Rank.KING,
    Rank.QUEEN,
    Rank.JACK,
    Rank.TEN,
    Rank.NINE,
)
_SEVEN_ACE: Final = (
    Rank.SEVEN,
    Rank.ACE,
    Rank.KING,
    Rank.QUEEN,
    Rank.JACK,
    Rank.TEN,
    Rank.NINE,
    Rank.EIGHT,
)

VARIANT: Final = Variant(
    rule_set=RuleSet.PARTNERSHIP_TRUC,
    deck=PIQUET,
    orders={TrickOrder.SEVEN_EIGHT: _SEVEN_EIGHT, TrickOrder.SEVEN_ACE: _SEVEN_ACE},
    seat_choices=(4,),
    target_score=12,
    ladder=Ladder.PLUS_TWO,
    mon_reste=True,
    redeal=True,
    governors=True,
    partner_tie=PartnerTie.LEADER_OR_SPOILED,
    signals={Signal.SEVEN: Rank.SEVEN, Signal.EIGHT: Rank.EIGHT, Signal.ACE: Rank.ACE},
    directives=(Directive.PLAY_SEVEN, Directive.PLAY_LOW, Directive.LEAVE_IT_TO_ME),
    binding=True,
    option_names=frozenset({"trick_order"}),
)

RULES: Final = FamilyRules(VARIANT)
new_game = RULES.new_game
options = RULES.options
options_from_mapping = RULES.options_from_mapping
decode_state = RULES.decode_state
