"""``truc demo``: a seeded match between engine bots, printed as it happens.

The bots here are deliberately simple (a seeded random choice among the legal
game actions, biased towards playing a card); they exist to show the engine.
Real bots that play through the service come with the lobby.
"""

from __future__ import annotations

import random
from typing import TextIO

from truc_protocol.convert import event_to_proto
from truc_rules import (
    Action,
    GameState,
    PlayCard,
    SendDirective,
    SendSignal,
    Transition,
    apply_action,
    legal_actions,
    new_game,
)

from .narration import describe

__all__ = ["choose_action", "play_demo"]


def choose_action(state: GameState, seat: int, rng: random.Random) -> Action:
    """A legal game action for ``seat`` (no signals), cards four times likelier than calls."""
    options = [
        a for a in legal_actions(state, seat) if not isinstance(a, SendSignal | SendDirective)
    ]
    weights = [4.0 if isinstance(a, PlayCard) else 1.0 for a in options]
    return rng.choices(options, weights)[0]


def play_demo(*, seed: int, max_hands: int, out: TextIO) -> int:
    rng = random.Random(seed)
    transition: Transition = new_game(seed=seed)
    actions = 0
    while True:
        for event in transition.events:  # told as clients tell them: one narration
            line = describe(event_to_proto(event, actions + 1))
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
