"""Catalan Truc (variants.md V5).

The Spanish pack, trick order 3 2 1 K N J 7 6 5 4 by rank only; four seats
in partnerships or two (option ``seats``); ``TRUC`` takes the stake to 2,
``RETRUC`` to 3, answered by the caller's next seat; no redeal, no mon
reste; 12 points a game. Partners signal ``TRES``, ``DUS``, ``AS`` and send the
directives of rules.md §7 but ``EMBIDE``, as advice.
"""

from __future__ import annotations

from typing import Final

from truc_rules.actions import Directive, Signal
from truc_rules.cards import SPANISH, Rank
from truc_rules.family import FamilyRules, Ladder, PartnerTie, Variant
from truc_rules.family.api import *  # noqa: F403 - the rule sets' shared API, as it lists it
from truc_rules.family.api import BOUND, SHARED
from truc_rules.rule_set import RuleSet

__all__ = [*SHARED, *BOUND]  # noqa: PLE0604

VARIANT: Final = Variant(
    rule_set=RuleSet.CATALAN_TRUC,
    deck=SPANISH,
    orders={
        None: (
            Rank.THREE,
            Rank.TWO,
            Rank.ONE,
            Rank.KING,
            Rank.KNIGHT,
            Rank.JACK,
            Rank.SEVEN,
            Rank.SIX,
            Rank.FIVE,
            Rank.FOUR,
        )
    },
    seat_choices=(4, 2),
    target_score=12,
    ladder=Ladder.TRUC_RETRUC,
    mon_reste=False,
    redeal=False,
    governors=False,
    partner_tie=PartnerTie.FIRST_PLAYED,
    signals={Signal.TRES: Rank.THREE, Signal.DUS: Rank.TWO, Signal.AS: Rank.ONE},
    directives=(
        Directive.LET_THEM_TAKE_IT,
        Directive.PLAY_HIGH,
        Directive.PLAY_LOW,
        Directive.TRUC,
        Directive.STAY_QUIET,
    ),
    binding=False,
    option_names=frozenset({"seats"}),
)

RULES: Final = FamilyRules(VARIANT)
new_game = RULES.new_game
options = RULES.options
options_from_mapping = RULES.options_from_mapping
decode_state = RULES.decode_state
