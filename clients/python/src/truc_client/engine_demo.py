"""``truc demo``: a seeded match between engine bots, printed as it happens.

The bots here are deliberately simple (a seeded random choice among the legal
game actions, biased towards playing a card); they exist to show the engine.
Real bots that play through the service come with the lobby. ``--ruleset``
plays any game of the family (``truc_y_flou`` by default).
"""

from __future__ import annotations

import random
from typing import TextIO

from truc_protocol.convert import event_to_proto, rule_set_to_proto
from truc_rules import Action, PlayCard, SendDirective, SendSignal
from truc_rules.registry import (
    AnyState,
    AnyTransition,
    apply_action,
    default_options,
    legal_actions,
    new_game,
)
from truc_rules.rule_set import RuleSet

from .narration import Narrator

__all__ = ["choose_action", "play_demo"]


def choose_action(state: AnyState, seat: int, rng: random.Random) -> Action:
    """A legal game action for ``seat`` (no signals), cards four times likelier than calls."""
    options = [
        a for a in legal_actions(state, seat) if not isinstance(a, SendSignal | SendDirective)
    ]
    weights = [4.0 if isinstance(a, PlayCard) else 1.0 for a in options]
    return rng.choices(options, weights)[0]


def play_demo(
    *, seed: int, max_hands: int, out: TextIO, rule_set: RuleSet = RuleSet.TRUC_Y_FLOU
) -> int:
    rng = random.Random(seed)
    transition: AnyTransition = new_game(default_options(rule_set), seed=seed)
    narrator = Narrator(rule_set_to_proto(rule_set))
    actions = 0
    while True:
        for event in transition.events:  # told as clients tell them: one narration
            line = narrator.describe(event_to_proto(event, actions + 1))
            if line is not None:
                print(line, file=out)
        state = transition.state
        seat = state.to_act
        if seat is None or (max_hands and state.hands_played >= max_hands):
            break
        action = choose_action(state, seat, rng)
        transition = apply_action(state, seat, action)
        actions += 1
    print(f"({actions} actions, {state.hands_played} hands, seed {seed})", file=out)
    return 0
