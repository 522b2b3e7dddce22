"""Constants of the table (rules.md §1, §2): seats, teams, captains, targets."""

from typing import Final

__all__ = [
    "CAPTAINS",
    "ESPINTOU",
    "HAND_SIZE",
    "MANCHES_TO_WIN",
    "NUM_SEATS",
    "TARGET_SCORE",
    "TEAM_A",
    "TEAM_B",
    "TEAM_NAMES",
    "TEAM_SIZE",
    "TRICKS_PER_HAND",
]

NUM_SEATS: Final = 6
"""Seats 0-5, numbered in the order of play (§1.1)."""
TEAM_SIZE: Final = 3
HAND_SIZE: Final = 3
"""Cards dealt to each seat (§2.5)."""
TRICKS_PER_HAND: Final = 3
TEAM_A: Final = 0
"""Team A holds seats 0, 2, 4: a seat's team is ``seat % 2``."""
TEAM_B: Final = 1
TEAM_NAMES: Final = ("A", "B")
CAPTAINS: Final = (0, 3)
"""The captain seat of team A and of team B (§1.2)."""
TARGET_SCORE: Final = 25
"""Game points that win a manche (§2.1); a rule option may change it."""
MANCHES_TO_WIN: Final = 2
"""A match is best of three manches (§2.1)."""
ESPINTOU: Final = 13
"""The espintou marker is shown for a team with this many points (§2.3)."""
