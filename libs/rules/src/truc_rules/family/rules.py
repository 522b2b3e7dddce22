"""One rule set's API, bound to its :class:`~truc_rules.family.variant.Variant`.

Every rule set module (``truc_rules.french_truc`` …) is a :class:`FamilyRules`
and the functions it re-exports; the functions that take a state need no
binding (a state knows its variant).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .codec import decode_state as _decode_state
from .engine import Transition
from .engine import new_game as _new_game
from .state import Deal, FamilyState
from .variant import FamilyOptions, Variant

__all__ = ["FamilyRules"]


class FamilyRules:
    """The rule-set-specific part of a variants.md rule set's API."""

    __slots__ = ("variant",)

    def __init__(self, variant: Variant) -> None:
        self.variant = variant

    def options(self, **values: object) -> FamilyOptions:
        """The rule set's options: its defaults with ``values`` over them."""
        return self.variant.options_from_mapping(values)

    def options_from_mapping(self, values: Mapping[str, object]) -> FamilyOptions:
        """Options from JSON-like values; an option the rule set lacks is refused."""
        return self.variant.options_from_mapping(values)

    def new_game(
        self,
        options: FamilyOptions | None = None,
        *,
        seed: int | None = None,
        deals: Sequence[Deal] | None = None,
        dealer: int | None = None,
        scores: tuple[int, int] = (0, 0),
        manches: tuple[int, int] = (0, 0),
    ) -> Transition:
        """Start a match (see :func:`truc_rules.family.engine.new_game`)."""
        return _new_game(
            self.variant,
            options,
            seed=seed,
            deals=deals,
            dealer=dealer,
            scores=scores,
            manches=manches,
        )

    def decode_state(self, data: bytes) -> FamilyState:
        """A state stored by :func:`~truc_rules.family.codec.encode_state`."""
        return _decode_state(data, self.variant)
