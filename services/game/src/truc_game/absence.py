"""Absent seats: a seat whose player missed several turns in a row is played by the house.

A seat whose turn deadline runs out is played by the deadline sweeper
(:mod:`truc_game.deadlines`: the rules' default action, after a
``TurnTimedOut`` event). Each game counts, per seat, the turns the sweeper had
to play *in a row*: a timed-out action adds one to its seat's count, an action
of the seat's own player (any accepted action: a card, a call, a signal or a
directive, through SubmitAction or a Play session) sets it back to zero. A seat
whose count reaches ``TRUC_ABSENT_TURNS`` (:attr:`AbsencePolicy.turns`) is
*absent*: from then on each of its turns gets the short deadline
``TRUC_ABSENT_TURN_MS`` (:attr:`AbsencePolicy.turn_ms`) instead of the game's
turn time, so the sweeper plays for it almost at once (the house plays it, as
a bot would), until its player acts again. A game whose players all left thus
plays out in minutes, not hours.

The counts are kept with the game in the store (in Redis, one field of the
game's hash, so under its hash tag on a cluster) and moved by the commit
itself, atomically: each commit is given the acting seat, whether its action
was timed out, the seat to act next and both deadlines
(:class:`~truc_game.ports.Absence`); the store moves the count and, when the
seat to act next is absent, sets the short deadline (and writes it in the
action's log record) instead of the normal one. No extra read, no extra round
trip; a player's action whose seat missed no turn writes nothing more.

The counts are also a pure function of the game's log (each record's action
entry says its seat and whether it was timed out, :mod:`truc_rules.action_codec`),
so any version's are rebuilt with it (:func:`missed_by_action`, used by
:mod:`truc_game.history`), and every version carries them
(:attr:`~truc_game.ports.Entry.missed`): each view says which seats are absent
(``SeatInfo.absent``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from truc_rules.action_codec import ActionRecord

from .ports import KEEP_DEADLINE, Absence

__all__ = [
    "MISSED_CAP",
    "NEVER_ABSENT",
    "AbsencePolicy",
    "absent_seats",
    "missed_after",
    "missed_by_action",
    "missed_turns",
]


MISSED_CAP: Final = 74
"""Missed turns in a row are counted up to this (the store keeps a count in one
printable character: ``'0'`` + 74 is ``'z'``); TRUC_ABSENT_TURNS is at most 50."""


@dataclass(frozen=True, slots=True)
class AbsencePolicy:
    """When a seat is absent, and what deadline its turns get then."""

    turns: int
    """Missed turns in a row that make a seat absent (``TRUC_ABSENT_TURNS``; 0: never)."""
    turn_ms: int
    """An absent seat's turn deadline, in ms (``TRUC_ABSENT_TURN_MS``)."""

    def commit(
        self,
        *,
        seat: int,
        timed_out: bool,
        next_seat: int | None,
        deadline_ms: int | None,
        now_ms: int,
        record_with: Callable[[int], bytes],
    ) -> Absence:
        """What a commit of ``seat``'s action needs: ``deadline_ms`` is the
        deadline it sets for ``next_seat`` (None: nobody acts; KEEP_DEADLINE: a
        message, the turn's deadline stays); ``record_with`` makes the action's
        log record with another deadline (the short one, if ``next_seat`` is
        absent)."""
        if (
            not self.turns
            or next_seat is None
            or deadline_ms is None
            or deadline_ms == KEEP_DEADLINE
        ):
            return Absence(seat, timed_out, None, self.turns, 0, b"")
        short = min(deadline_ms, now_ms + self.turn_ms)
        return Absence(seat, timed_out, next_seat, self.turns, short, record_with(short))

    def absent(self, missed: Sequence[int]) -> frozenset[int]:
        """The absent seats, given each seat's missed turns in a row."""
        return absent_seats(missed, self.turns)


_NOBODY: Final[frozenset[int]] = frozenset()

NEVER_ABSENT: Final = AbsencePolicy(turns=0, turn_ms=0)
"""No seat is ever absent: its turns always get the game's turn time."""


def absent_seats(missed: Sequence[int], turns: int) -> frozenset[int]:
    """The seats whose missed turns in a row reached ``turns`` (none if 0)."""
    if turns <= 0 or not missed:
        return _NOBODY
    return frozenset(seat for seat, count in enumerate(missed) if count >= turns)


def missed_turns(counts: Iterable[int]) -> tuple[int, ...]:
    """Each seat's missed turns in a row, seat 0 first, as every version carries
    them: without trailing zeros (``()``: nobody missed a turn)."""
    found = list(counts)
    while found and not found[-1]:
        found.pop()
    return tuple(found)


def missed_after(missed: Sequence[int], seat: int, timed_out: bool) -> tuple[int, ...]:
    """The counts after ``seat``'s action: one more if it was timed out (up to
    :data:`MISSED_CAP`), else zero."""
    counts = list(missed) + [0] * (seat + 1 - len(missed))
    counts[seat] = min(counts[seat] + 1, MISSED_CAP) if timed_out else 0
    return missed_turns(counts)


def missed_by_action(
    missed: Sequence[int], actions: Iterable[ActionRecord]
) -> list[tuple[int, ...]]:
    """The counts after each of ``actions`` (a game's log, in order), starting
    from ``missed``: what the commits that applied them kept."""
    found: list[tuple[int, ...]] = []
    counts = tuple(missed)
    for action in actions:
        counts = missed_after(counts, action.seat, action.timed_out)
        found.append(counts)
    return found
