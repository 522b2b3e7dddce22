"""French Truc (variants.md V2): two players, Lanes and Sackson.

The piquet pack in French suits, trick order 7 8 A K Q J T 9 (option
``trick_order``: ``seven_eight`` | ``seven_ace``), raises of +2 (1 -> 2 -> 4 ...),
``MON_RESTE``, the redeal by consent; 12 points a game, best of three.
"""

from __future__ import annotations

from typing import Final

from truc_rules.cards import PIQUET, Rank
from truc_rules.family import FamilyRules, Ladder, PartnerTie, TrickOrder, Variant
from truc_rules.family.api import *  # noqa: F403 - the rule sets' shared API, as it lists it
from truc_rules.family.api import BOUND, SHARED
from truc_rules.rule_set import RuleSet

__all__ = [*SHARED, *BOUND]  # noqa: PLE0604

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
    rule_set=RuleSet.FRENCH_TRUC,
    deck=PIQUET,
    orders={TrickOrder.SEVEN_EIGHT: _SEVEN_EIGHT, TrickOrder.SEVEN_ACE: _SEVEN_ACE},
    seat_choices=(2,),
    target_score=12,
    ladder=Ladder.PLUS_TWO,
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
