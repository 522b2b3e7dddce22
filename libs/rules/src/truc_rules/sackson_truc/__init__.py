"""Sackson's doubling variant of French Truc (variants.md V3).

As French Truc, except that every ``RAISE`` doubles the stake (1 -> 2 -> 4 ->
8 ...) and a game is 16 points.
"""

from __future__ import annotations

from typing import Final

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
    rule_set=RuleSet.SACKSON_TRUC,
    deck=PIQUET,
    orders={TrickOrder.SEVEN_EIGHT: _SEVEN_EIGHT, TrickOrder.SEVEN_ACE: _SEVEN_ACE},
    seat_choices=(2,),
    target_score=16,
    ladder=Ladder.DOUBLE,
    mon_reste=True,
    redeal=True,
    governors=False,
    partner_tie=PartnerTie.FIRST_PLAYED,
    signals={},
    directives=(),
    binding=False,
    option_names=frozenset({"trick_order"}),
)

RULES: Final = FamilyRules(VARIANT)
new_game = RULES.new_game
options = RULES.options
options_from_mapping = RULES.options_from_mapping
decode_state = RULES.decode_state
