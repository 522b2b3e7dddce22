"""The engine shared by the rule sets of variants.md: French Truc, Sackson's
doubling variant, partnership Truc with governors, and Catalan Truc.

V1 (seats, deal, tricks, spoiled tricks, game and match, conceding, raises) is
written once here; a :class:`~truc_rules.family.variant.Variant` holds what
tells the rule sets apart (pack, trick order, ladder, mon reste, redeal,
governors, partner ties, signals). Each rule set is its own module
(:mod:`truc_rules.french_truc`, :mod:`truc_rules.sackson_truc`,
:mod:`truc_rules.partnership_truc`, :mod:`truc_rules.catalan_truc`) with the
API of Truc y Flou's: ``new_game``, ``to_act``, ``legal_actions``,
``apply_action``, ``view_for``, ``encode_state``/``decode_state``,
``default_action``.
"""

from .codec import encode_state
from .defaults import default_action
from .engine import Transition, apply_action, is_terminal, legal_actions, lowest_cards, to_act
from .rules import FamilyRules
from .state import Deal, FamilyState, Pending, Phase, Prompt, Trick
from .variant import FamilyOptions, Ladder, MessageRoles, PartnerTie, TrickOrder, Variant
from .views import FamilyView, view_for

__all__ = [
    "Deal",
    "FamilyOptions",
    "FamilyRules",
    "FamilyState",
    "FamilyView",
    "Ladder",
    "MessageRoles",
    "PartnerTie",
    "Pending",
    "Phase",
    "Prompt",
    "Transition",
    "Trick",
    "TrickOrder",
    "Variant",
    "apply_action",
    "default_action",
    "encode_state",
    "is_terminal",
    "legal_actions",
    "lowest_cards",
    "to_act",
    "view_for",
]
