"""The names of the rule sets of the family (the games the service offers)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["RuleSet"]


class RuleSet(StrEnum):
    """A game of the family, by its name in scenario files and options."""

    TRUC_Y_FLOU = "truc_y_flou"
    """rules.md: six seats, the embit, the flor, the truc ladder. The default."""
    FRENCH_TRUC = "french_truc"
    """variants.md V2: two players, the piquet pack, raises of +2."""
    SACKSON_TRUC = "sackson_truc"
    """V3: as french_truc, raises double, 16 points a game."""
    PARTNERSHIP_TRUC = "partnership_truc"
    """V4: four players in partnerships, governors, binding instructions."""
    CATALAN_TRUC = "catalan_truc"
    """V5: the Spanish pack, TRUC and RETRUC, four seats (or two)."""
