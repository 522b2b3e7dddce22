"""The event log encoding (truc_rules.event_codec): the rules' event encoding
read back for every rule set, the piquet pack's cards included, and anything
else refused."""

from __future__ import annotations

import random

import pytest

from truc_rules.actions import PLAY
from truc_rules.cards import PIQUET_CARDS, Card
from truc_rules.errors import InvalidSetup
from truc_rules.event_codec import decode_events, encode_events
from truc_rules.events import CardPlayed, CardsDealt, TurnTimedOut
from truc_rules.registry import apply_action, default_options, legal_actions, new_game
from truc_rules.rule_set import RuleSet
from truc_rules.truc_y_flou.codec import decode_events as truc_y_flou_decode_events

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("rule_set", list(RuleSet))
def test_the_events_of_random_games_of_every_rule_set_round_trip(rule_set: RuleSet) -> None:
    rng = random.Random(7)
    for seed in range(3):
        transition = new_game(default_options(rule_set), seed=seed)
        while True:
            data = encode_events(transition.events)
            assert decode_events(data) == transition.events
            if rule_set == RuleSet.TRUC_Y_FLOU:  # the log Truc y Flou always wrote
                assert truc_y_flou_decode_events(data) == transition.events
            state = transition.state
            if state.to_act is None:
                break
            action = rng.choice(legal_actions(state, state.to_act))
            transition = apply_action(state, state.to_act, action)
            timed_out = (TurnTimedOut(state.to_act, action),)
            assert decode_events(encode_events(timed_out)) == timed_out


def test_every_card_of_both_packs_is_read_back() -> None:
    events = tuple(CardPlayed(0, card, 1) for card in Card)
    assert decode_events(encode_events(events)) == events
    dealt = (CardsDealt(1, PIQUET_CARDS[:3], None, None), TurnTimedOut(1, PLAY[Card.SP_A]))
    assert decode_events(encode_events(dealt)) == dealt


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"{",
        b"[[999]]",
        b"[[-1, 0]]",
        b"[[0]]",
        b'[["x", 1]]',
        b"[[6, 0]]",
        b"[[12, 0, 72, 1]]",
        b"[[12, 0, -1, 1]]",
        b"[[12, 0, true, 1]]",
        b'[[12, 0, "7He", 1]]',
    ],
)
def test_corrupt_entries_are_refused(data: bytes) -> None:
    with pytest.raises(InvalidSetup):
        decode_events(data)
