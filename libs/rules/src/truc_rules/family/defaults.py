"""The deterministic default action for a seat of a variants.md rule set that
lets its turn deadline pass: refuse a redeal, fold a pending raise or
MON_RESTE, else play the lowest legal card (obeying a binding instruction)."""

from __future__ import annotations

from truc_rules.actions import CALL, PLAY, Action, Call

from .engine import legal_actions, strengths
from .state import FamilyState, Phase, Prompt

__all__ = ["default_action"]


def default_action(state: FamilyState) -> Action | None:
    """What the seat expected to act does if it does nothing; None if nobody acts.

    Its own turn: its lowest legal card in the trick order (among equals the
    lowest card number), no raise, no concession; a redeal proposal: REFUSE;
    a raise or MON_RESTE: FOLD.
    """
    seat = state.to_act
    if seat is None or state.phase != Phase.PLAY:
        return None
    prompt = state.prompt
    if prompt == Prompt.REDEAL_ANSWER:
        return CALL[Call.REFUSE]
    if prompt != Prompt.TURN:
        return CALL[Call.FOLD]
    power = strengths(state)
    cards = [a.card for a in legal_actions(state, seat) if a in _PLAYS]
    return PLAY[min(cards, key=lambda c: (power[c], c))]


_PLAYS = frozenset(PLAY.values())
