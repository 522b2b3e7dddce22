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

from dataclasses import replace
from typing import Final

from truc_rules import french_truc
from truc_rules.actions import Directive, Signal
from truc_rules.cards import Rank
from truc_rules.family import FamilyRules, PartnerTie
from truc_rules.family.api import *  # noqa: F403 - the rule sets' shared API, as it lists it
from truc_rules.family.api import BOUND, SHARED
from truc_rules.rule_set import RuleSet

__all__ = [*SHARED, *BOUND]  # noqa: PLE0604

VARIANT: Final = replace(
    french_truc.VARIANT,
    rule_set=RuleSet.PARTNERSHIP_TRUC,
    seat_choices=(4,),
    governors=True,
    partner_tie=PartnerTie.LEADER_OR_SPOILED,
    signals={Signal.SEVEN: Rank.SEVEN, Signal.EIGHT: Rank.EIGHT, Signal.ACE: Rank.ACE},
    directives=(Directive.PLAY_SEVEN, Directive.PLAY_LOW, Directive.LEAVE_IT_TO_ME),
    binding=True,
)
"""V4.1: as french_truc (pack, order, target, raises, MON_RESTE, redeal), for
four players with governors (V4.2-V4.5)."""

RULES: Final = FamilyRules(VARIANT)
new_game = RULES.new_game
options = RULES.options
options_from_mapping = RULES.options_from_mapping
decode_state = RULES.decode_state
