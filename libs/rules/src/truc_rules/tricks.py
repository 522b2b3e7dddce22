"""Who wins a hand from its tricks (rules.md §3.5), shared by every rule set.

Each trick is won by a team (0 or 1) or by nobody (None: *pardes* in Truc y
Flou, *spoiled* in variants.md V1.4).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

__all__ = ["NOBODY", "UNDECIDED", "hand_decision"]

UNDECIDED: Final = -1
"""The tricks so far do not decide the hand."""
NOBODY: Final = 2
"""All three tricks were won by nobody: nobody wins the hand."""


def hand_decision(winners: Sequence[int | None]) -> int:
    """§3.5: the team that won the hand by these tricks, NOBODY, or UNDECIDED.

    Two tricks win; a won trick beside a drawn one wins; one each and the third
    drawn goes to the earlier; all three drawn is NOBODY.
    """
    if len(winners) < 2:
        return UNDECIDED
    first, second = winners[0], winners[1]
    if len(winners) == 2:
        if first is None and second is None:
            return UNDECIDED
        if first is None:
            return second  # type: ignore[return-value]
        if second is None or first == second:
            return first
        return UNDECIDED
    third = winners[2]
    if first is None and second is None:
        return NOBODY if third is None else third
    if third is None:
        return first  # type: ignore[return-value]  # one each, third drawn: the earlier
    return third
