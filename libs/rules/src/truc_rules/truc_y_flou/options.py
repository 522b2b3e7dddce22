"""Rule options (rules.md names each one; the default comes first there).

A table chooses its options once, when the game is created. Unknown option
names and values are refused with :class:`~truc_rules.errors.InvalidSetup`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from enum import StrEnum

from truc_rules.errors import InvalidSetup

from .constants import MANCHES_TO_WIN, TARGET_SCORE
from .ranking import PeriqueTrickRank

__all__ = ["CutMode", "Responder", "RuleOptions"]


class Responder(StrEnum):
    """Option ``responder`` (§5.3, §6.3): who answers for the calling side."""

    CAPTAIN = "captain"
    """The captain answers embit raises and truc counter-raises (the default)."""
    CALLER = "caller"
    """The embit opener answers raises; a truc counter-raise is answered by the
    seat that made the call being raised."""


class CutMode(StrEnum):
    """How the pack is cut (§2.5: the seat before the dealer *may* cut).

    Not named in rules.md; the engine adds it so that a table can let the
    cutter really choose. ``automatic`` cuts at a position drawn from the
    game's seed (cosmetic, as the shuffle is already random). ``cutter`` starts
    every hand with a ``CutDeck`` action of seat dealer - 1.
    """

    AUTOMATIC = "automatic"
    CUTTER = "cutter"


@dataclass(frozen=True, slots=True, kw_only=True)
class RuleOptions:
    """The rule options of rules.md, with their documented defaults."""

    perique_trick_rank: PeriqueTrickRank = PeriqueTrickRank.LOWEST
    """§1.4: ``lowest`` | ``natural`` | ``top``."""
    play_out_all_tricks: bool = False
    """§3.6: keep playing after the hand is decided (the winner stays the first decided)."""
    ace_value: int = 0
    """§4.1: what an ace counts in declarations, 0 or 1."""
    responder: Responder = Responder.CAPTAIN
    """§5.3, §6.3: who answers for the calling side."""
    cut: CutMode = CutMode.AUTOMATIC
    """§2.5: see :class:`CutMode`."""
    target_score: int = TARGET_SCORE
    """§2.1: points that win a manche (25). "The rest" is counted from it."""
    manches_to_win: int = MANCHES_TO_WIN
    """§2.1: manches that win the match (2: best of three)."""

    def __post_init__(self) -> None:
        if self.ace_value not in (0, 1):
            raise InvalidSetup(f"ace_value must be 0 or 1, not {self.ace_value!r}")
        if not 1 <= self.target_score <= 250:
            raise InvalidSetup(f"target_score must be 1-250, not {self.target_score!r}")
        if not 1 <= self.manches_to_win <= 9:
            raise InvalidSetup(f"manches_to_win must be 1-9, not {self.manches_to_win!r}")

    @classmethod
    def from_mapping(cls, values: Mapping[str, object]) -> RuleOptions:
        """Build options from JSON-like values (``{"ace_value": 1}``), checking every name."""
        known = {f.name: f for f in fields(cls)}
        kwargs: dict[str, object] = {}
        for name, raw in values.items():
            if name not in known:
                raise InvalidSetup(f"unknown rule option {name!r}; known: {sorted(known)}")
            kwargs[name] = _convert(name, raw)
        return cls(**kwargs)  # type: ignore[arg-type]

    def to_mapping(self) -> dict[str, object]:
        """The options as JSON-like values (the inverse of :meth:`from_mapping`)."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}


_ENUMS: dict[str, type[StrEnum]] = {
    "perique_trick_rank": PeriqueTrickRank,
    "responder": Responder,
    "cut": CutMode,
}


def _convert(name: str, raw: object) -> object:
    if name in _ENUMS:
        choices = {member.value: member for member in _ENUMS[name]}
        if not isinstance(raw, str) or raw not in choices:
            raise InvalidSetup(f"{name} must be one of {sorted(choices)}, not {raw!r}")
        return choices[raw]
    if name == "play_out_all_tricks":
        if not isinstance(raw, bool):
            raise InvalidSetup(f"{name} must be true or false, not {raw!r}")
        return raw
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise InvalidSetup(f"{name} must be an integer, not {raw!r}")
    return raw


def _plain(value: object) -> object:
    return value.value if isinstance(value, StrEnum) else value
