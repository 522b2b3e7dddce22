"""The deterministic default action for a seat that lets its turn deadline pass.

Issue #3: "an action not taken within a configurable time is taken for the seat
by a deterministic default (pass, fold a raise, play the lowest card)". Pure:
the service decides *when*; this decides *what*.
"""

from __future__ import annotations

from .actions import CALL, CHOOSE_DEALER, PLAY, Action, Call, CutDeck
from .ranking import trick_class
from .state import GameState, Phase, Prompt

__all__ = ["default_action"]

_HALF_PACK = CutDeck(20)


def default_action(state: GameState) -> Action | None:
    """What the seat expected to act does if it does nothing; None if nobody acts.

    * its own turn: play its lowest card in trick order (the weakest class; among
      equals, the lowest card number), making no declaration and no truc call;
    * a poll: PASS; an answer to a raise or a challenge: FOLD;
    * the draw for first deal: the captain names itself dealer;
    * the cut (cut=cutter): cut the pack in half.
    """
    seat = state.to_act
    if seat is None:
        return None
    if state.phase == Phase.DRAW:
        return CHOOSE_DEALER[seat]
    if state.phase == Phase.CUT:
        return _HALF_PACK
    prompt = state.prompt
    if prompt == Prompt.TURN:
        classes = trick_class(state.options.perique_trick_rank)
        lowest = max(state.hands[seat], key=lambda c: (classes[c], -c))
        return PLAY[lowest]
    if prompt in (Prompt.EMBIT_POLL, Prompt.FLOR_POLL):
        return CALL[Call.PASS]
    return CALL[Call.FOLD]
