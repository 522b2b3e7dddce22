"""A hand carries at most MAX_MESSAGES team messages, in every rule set that has
them: past that a message is refused (and not offered), and the stored state
stays encodable (it counts the hand's messages in one byte)."""

from __future__ import annotations

import pytest

from truc_rules import registry
from truc_rules.actions import MAX_MESSAGES, SendDirective, SendSignal
from truc_rules.errors import IllegalAction, Reason
from truc_rules.rule_set import RuleSet


def _messages(state: registry.AnyState) -> list[tuple[int, SendSignal | SendDirective]]:
    seats = registry.seat_count(state.options)
    return [
        (seat, action)
        for seat in range(seats)
        for action in registry.legal_actions(state, seat)
        if isinstance(action, SendSignal | SendDirective)
    ]


@pytest.mark.parametrize("rule_set", [RuleSet.TRUC_Y_FLOU, RuleSet.CATALAN_TRUC])
def test_a_hand_carries_at_most_max_messages(rule_set: RuleSet) -> None:
    options = registry.default_options(rule_set)
    state = registry.new_game(options, seed=7, dealer=0).state
    while not _messages(state):  # play on until some seat may message (a hand is on)
        seat = state.to_act
        assert seat is not None
        state = registry.apply_action(state, seat, registry.legal_actions(state, seat)[0]).state
    for _ in range(MAX_MESSAGES):
        sender, message = _messages(state)[0]
        state = registry.apply_action(state, sender, message).state
    assert len(state.signals) == MAX_MESSAGES
    registry.decode_state(registry.encode_state(state))  # still stored
    assert not _messages(state)
    with pytest.raises(IllegalAction) as refused:
        registry.apply_action(state, sender, message)
    assert refused.value.reason is Reason.NOT_ALLOWED_NOW
    assert str(MAX_MESSAGES) in str(refused.value)
