"""Signals and directives are team-private (rules.md §6): they reach only the
sender's team, in the events a view carries and in the view's own list of the
hand's signals. Checked on the engine alone, from random matches in which
players signal often; spectators see none of them."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from truc_rules import (
    Action,
    RuleOptions,
    SendDirective,
    SendSignal,
    apply_action,
    legal_actions,
    new_game,
    view_for,
)
from truc_rules.truc_y_flou.events import DirectiveSent, SignalSent

seeds = st.integers(min_value=0, max_value=2**63 - 1)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, play_seed=seeds)
def test_signals_and_directives_reach_only_the_senders_team(seed: int, play_seed: int) -> None:
    rng = random.Random(play_seed)
    transition = new_game(RuleOptions(), seed=seed)
    seen_by_teammates = 0
    sent = 0
    for _ in range(400):
        state = transition.state
        if state.to_act is None:
            break
        sender = rng.randrange(6)
        messages = [
            a for a in legal_actions(state, sender) if isinstance(a, SendSignal | SendDirective)
        ]
        action: Action
        if messages and rng.random() < 0.5:
            seat, action = sender, rng.choice(messages)
        else:
            seat = state.to_act
            moves = [
                a
                for a in legal_actions(state, seat)
                if not isinstance(a, SendSignal | SendDirective)
            ]
            action = rng.choice(moves)
        transition = apply_action(state, seat, action)
        private = [e for e in transition.events if isinstance(e, SignalSent | DirectiveSent)]
        sent += len(private)
        for viewer in (None, *range(6)):
            view = view_for(transition.state, viewer, transition.events)
            for event in view.events:
                if isinstance(event, SignalSent | DirectiveSent):
                    assert viewer is not None, f"a spectator saw {event}"
                    assert event.seat % 2 == viewer % 2, f"seat {viewer} saw {event}"
            for sender_seat, _ in view.signals:
                assert viewer is not None, "a spectator's view lists the hand's signals"
                assert sender_seat % 2 == viewer % 2, f"seat {viewer} sees seat {sender_seat}'s"
            if viewer is not None:
                mine = [e for e in private if e.seat % 2 == viewer % 2]
                shown = [e for e in view.events if isinstance(e, SignalSent | DirectiveSent)]
                assert shown == mine, "a teammate must see the team's signals, in order"
                seen_by_teammates += len(shown)
    # Each message reached its three senders' teammates (the sender included), no more.
    assert seen_by_teammates == 3 * sent


def test_random_play_of_the_privacy_test_does_send_messages() -> None:
    """The property above is not vacuous: its random play sends signals."""
    state = new_game(RuleOptions(), seed=7).state
    while not any(
        isinstance(a, SendSignal | SendDirective) for s in range(6) for a in legal_actions(state, s)
    ):
        seat = state.to_act
        assert seat is not None
        state = apply_action(state, seat, legal_actions(state, seat)[0]).state
    senders = {s for s in range(6) for a in legal_actions(state, s) if isinstance(a, SendSignal)}
    assert senders, "some seat may signal once the cards are dealt"
