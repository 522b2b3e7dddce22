"""Rebuilding a game from its first state and its action log (truc_rules.replay):
random matches of every rule set, with messages and turn deadlines, replayed
from their stored log give back every version's state (byte for byte) and
events; a log that does not fit the game is refused, naming its entry."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Final

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from truc_rules import registry
from truc_rules.action_codec import ActionRecord, decode_actions, decode_records, encode_actions
from truc_rules.actions import Action, Call, MakeCall, PlayCard, SendDirective, SendSignal
from truc_rules.errors import IllegalAction, InvalidSetup, Reason
from truc_rules.event_codec import encode_events
from truc_rules.events import Event, TurnTimedOut
from truc_rules.registry import AnyOptions, AnyState
from truc_rules.replay import CorruptActionLog, replay, state_at
from truc_rules.rule_set import RuleSet

from .test_family_properties import options_for
from .test_properties import options_strategy

pytestmark = pytest.mark.unit

seeds = st.integers(min_value=0, max_value=2**63 - 1)
_SETTINGS: Final = settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
_WEIGHTS: Final = {Call.ACCEPT: 3.0, Call.PASS: 3.0, Call.FOLD: 0.5, Call.MON_RESTE: 0.3}
_RARE: Final = {Call.MI_FALTA, Call.RESTOU_Y_TROUCOU, Call.RESTOU, Call.ALIBARESTOU_CON_FLOR}


def options_of(rule_set: RuleSet) -> st.SearchStrategy[AnyOptions]:
    """Random rule options of any rule set (Truc y Flou's include the cutter's cut)."""
    if rule_set == RuleSet.TRUC_Y_FLOU:
        return options_strategy
    return options_for(rule_set)


def is_message(action: Action) -> bool:
    return isinstance(action, SendSignal | SendDirective)


def weight(action: Action) -> float:
    if isinstance(action, PlayCard):
        return 5.0
    if isinstance(action, MakeCall):
        return 0.15 if action.call in _RARE else _WEIGHTS.get(action.call, 1.0)
    return 1.0


@dataclass(frozen=True)
class Match:
    """A match as the service played it: the first state and, for each later
    version, the action log's entry, the state and the events it stored."""

    first: AnyState
    records: tuple[ActionRecord, ...]
    states: tuple[AnyState, ...]
    """The state of version 2, 3, ... (one per entry)."""
    events: tuple[tuple[Event, ...], ...]
    """The events of version 2, 3, ...; a deadline's begin with TurnTimedOut."""


def random_match(
    options: AnyOptions, seed: int, play_seed: int, *, deadlines: float = 0.15
) -> Match:
    """A whole random match through the registry, as the service plays it:
    legal actions of the seat to act, messages of random seats now and then, and
    with probability ``deadlines`` the default action of a turn deadline."""
    rng = random.Random(play_seed)
    first = registry.new_game(options, seed=seed).state
    seats = registry.seat_count(first)
    state = first
    records: list[ActionRecord] = []
    states: list[AnyState] = []
    events: list[tuple[Event, ...]] = []
    for _ in range(20_000):
        seat = state.to_act
        if seat is None:
            return Match(first, tuple(records), tuple(states), tuple(events))
        action: Action | None = None
        timed_out = False
        if rng.random() < 0.1:
            sender = rng.randrange(seats)
            chatter = [a for a in registry.legal_actions(state, sender) if is_message(a)]
            if chatter:
                seat, action = sender, rng.choice(chatter)
        if action is None and rng.random() < deadlines:
            action, timed_out = registry.default_action(state), True
        if action is None:
            moves = [a for a in registry.legal_actions(state, seat) if not is_message(a)]
            action = rng.choices(moves, [weight(a) for a in moves])[0]
        transition = registry.apply_action(state, seat, action)
        stored = transition.events
        if timed_out:  # as the service's deadline sweep writes it
            stored = (TurnTimedOut(seat, action), *stored)
        records.append(ActionRecord(seat, action, timed_out))
        states.append(transition.state)
        events.append(stored)
        state = transition.state
    raise AssertionError("the match did not end in 20,000 actions")


@pytest.mark.parametrize("rule_set", list(RuleSet))
@_SETTINGS
@given(data=st.data(), seed=seeds, play_seed=seeds)
def test_a_replayed_log_gives_back_every_version_exactly(
    rule_set: RuleSet, data: st.DataObject, seed: int, play_seed: int
) -> None:
    """From the stored log (encoded, then decoded) and the first state: every
    version's encoded state and its events (TurnTimedOut included) are the ones
    of the original play, and the match ends where it ended; the log takes two
    bytes per action."""
    match = random_match(data.draw(options_of(rule_set)), seed, play_seed)
    assert match.states[-1].to_act is None
    log = encode_actions(match.records)
    assert len(log) == 2 * len(match.records) <= 3 * len(match.records)
    records = decode_records(log)
    assert records == list(match.records)
    replayed = list(replay(registry.decode_state(registry.encode_state(match.first)), records))
    assert len(replayed) == len(match.records)
    for version, (transition, state, events) in enumerate(
        zip(replayed, match.states, match.events, strict=True), start=2
    ):
        assert registry.encode_state(transition.state) == registry.encode_state(state), version
        assert transition.events == events, version
        assert encode_events(transition.events) == encode_events(events), version
    # Plain (seat, action) pairs: the same states, the events without TurnTimedOut.
    for transition, record, state, events in zip(
        replay(match.first, decode_actions(log)), records, match.states, match.events, strict=True
    ):
        assert transition.state == state
        assert transition.events == (events[1:] if record.timed_out else events)


@pytest.mark.parametrize("rule_set", list(RuleSet))
def test_state_at_gives_each_version_and_refuses_others(rule_set: RuleSet) -> None:
    match = random_match(registry.default_options(rule_set), seed=11, play_seed=5)
    assert any(r.timed_out for r in match.records)  # (seeds where deadlines happen)
    last = len(match.records) + 1
    assert state_at(match.first, match.records, 1) is match.first
    for version in (2, 3, last // 2, last):
        state = state_at(match.first, iter(match.records), version)
        assert registry.encode_state(state) == registry.encode_state(match.states[version - 2])
    assert state_at(match.first, match.records[:4], 5) == match.states[3]
    for version in (0, -1, last + 1):
        with pytest.raises(ValueError, match="version"):
            state_at(match.first, match.records, version)
    with pytest.raises(ValueError, match="past the log's last version 5"):
        state_at(match.first, match.records[:4], 6)


@pytest.mark.parametrize("rule_set", list(RuleSet))
def test_an_entry_the_rules_refuse_is_a_corrupt_log_naming_it(rule_set: RuleSet) -> None:
    """An entry moved to another seat, or a log of another game: the versions
    before it are replayed, then CorruptActionLog (an InvalidSetup) names the
    entry, its seat and action, and the rules' reason."""
    match = random_match(registry.default_options(rule_set), seed=3, play_seed=9)
    records = list(match.records)
    index = next(i for i, r in enumerate(records) if i > 3 and not is_message(r.action))
    seats = registry.seat_count(match.first)
    records[index] = records[index]._replace(seat=(records[index].seat + 1) % seats)
    replayed: list[AnyState] = []
    with pytest.raises(CorruptActionLog) as caught:
        replayed.extend(t.state for t in replay(match.first, records))
    refused = caught.value
    assert isinstance(refused, InvalidSetup)
    assert (refused.index, refused.seat, refused.action) == (
        index,
        records[index].seat,
        records[index].action,
    )
    assert isinstance(refused.refused, IllegalAction)
    assert refused.refused.reason == Reason.NOT_YOUR_TURN
    assert f"entry {index} " in str(refused) and f"version {index + 2}" in str(refused)
    assert replayed == list(match.states[:index])
    # Another game's log does not fit this first state.
    other = random_match(registry.default_options(rule_set), seed=4, play_seed=9)
    with pytest.raises(CorruptActionLog):
        for _ in replay(match.first, other.records):
            pass
    # An entry of a seat the table does not have.
    with pytest.raises(CorruptActionLog, match="entry 0 "):
        list(replay(match.first, [(seats, match.records[0].action)]))
