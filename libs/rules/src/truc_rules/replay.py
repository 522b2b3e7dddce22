"""Rebuilding a game's versions from its first state and its action log.

The engine is deterministic: a game's first state (version 1) and the actions
applied to it, in order, give back every later version, its state and its
events exactly as they were first computed. Version ``n`` is the state after
the first ``n - 1`` actions. An action the service took for a late seat (an
:class:`~truc_rules.action_codec.ActionRecord` with ``timed_out``) gets its
``TurnTimedOut`` event first, as the service wrote it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

from truc_rules.action_codec import ActionRecord
from truc_rules.actions import Action
from truc_rules.errors import IllegalAction, InvalidSetup
from truc_rules.events import TurnTimedOut
from truc_rules.registry import AnyState, AnyTransition, apply_action

__all__ = ["CorruptActionLog", "replay", "state_at"]


class CorruptActionLog(InvalidSetup):
    """An action of a log that the rules refuse where the log puts it: the log
    does not belong to this first state, or it was damaged."""

    def __init__(self, index: int, seat: int, action: Action, refused: IllegalAction) -> None:
        super().__init__(
            f"action log entry {index} (seat {seat}: {action}, towards version {index + 2}) "
            f"is refused by the rules: {refused}"
        )
        self.index = index
        """The entry's position in the log (0: the first action, giving version 2)."""
        self.seat = seat
        self.action = action
        self.refused = refused


def replay(
    first: AnyState, actions: Iterable[tuple[int, Action] | ActionRecord]
) -> Iterator[AnyTransition]:
    """The transition of each action applied in turn from ``first``: the state of
    version ``i + 2`` and its events for entry ``i``. Raises CorruptActionLog
    when an entry is refused (the transitions before it have been yielded)."""
    state = first
    for index, item in enumerate(actions):
        seat, action = item[0], item[1]
        try:
            transition = apply_action(state, seat, action)
        except IllegalAction as exc:
            raise CorruptActionLog(index, seat, action, exc) from exc
        if isinstance(item, ActionRecord) and item.timed_out:
            transition = replace(
                transition, events=(TurnTimedOut(seat, action), *transition.events)
            )
        yield transition
        state = transition.state


def state_at(
    first: AnyState, actions: Iterable[tuple[int, Action] | ActionRecord], version: int
) -> AnyState:
    """The state of ``version`` (1: ``first``; ``n``: after ``n - 1`` actions of the
    log; later actions are not read). ValueError if the log has no such version."""
    if version < 1:
        raise ValueError(f"versions start at 1, not {version}")
    state = first
    reached = 1
    if version > 1:
        for transition in replay(first, actions):
            state = transition.state
            reached += 1
            if reached == version:
                break
    if reached != version:
        raise ValueError(f"version {version} is past the log's last version {reached}")
    return state
