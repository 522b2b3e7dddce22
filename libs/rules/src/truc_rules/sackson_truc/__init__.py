"""Sackson's doubling variant of French Truc (variants.md V3).

As French Truc, except that every ``RAISE`` doubles the stake (1 -> 2 -> 4 ->
8 ...) and a game is 16 points.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from truc_rules import french_truc
from truc_rules.family import FamilyRules, Ladder
from truc_rules.family.api import *  # noqa: F403 - the rule sets' shared API, as it lists it
from truc_rules.family.api import BOUND, SHARED
from truc_rules.rule_set import RuleSet

__all__ = [*SHARED, *BOUND]  # noqa: PLE0604

VARIANT: Final = replace(
    french_truc.VARIANT, rule_set=RuleSet.SACKSON_TRUC, target_score=16, ladder=Ladder.DOUBLE
)
"""V3: as french_truc, with doubling raises and a game of 16."""

RULES: Final = FamilyRules(VARIANT)
new_game = RULES.new_game
options = RULES.options
options_from_mapping = RULES.options_from_mapping
decode_state = RULES.decode_state
