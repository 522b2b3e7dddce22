"""Property tests of the engine (hypothesis): random legal play from random seeds
and rule options, with the engine's invariants checked at every step."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import fields, is_dataclass, replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from truc_rules import (
    DECK,
    Action,
    Call,
    Card,
    ChooseDealer,
    CutDeck,
    CutMode,
    Directive,
    GameState,
    IllegalAction,
    MakeCall,
    PeriqueTrickRank,
    Phase,
    PlayCard,
    Responder,
    RuleOptions,
    SendDirective,
    SendSignal,
    Signal,
    apply_action,
    decode_state,
    encode_state,
    legal_actions,
    new_game,
    view_for,
)
from truc_rules.truc_y_flou.codec import decode_events, encode_events
from truc_rules.truc_y_flou.defaults import default_action
from truc_rules.truc_y_flou.events import CardsDealt, Event, TurnTimedOut
from truc_rules.truc_y_flou.ranking import trick_class

options_strategy = st.builds(
    RuleOptions,
    perique_trick_rank=st.sampled_from(PeriqueTrickRank),
    play_out_all_tricks=st.booleans(),
    ace_value=st.sampled_from([0, 1]),
    responder=st.sampled_from(Responder),
    cut=st.sampled_from(CutMode),
    target_score=st.sampled_from([25, 25, 12, 7]),
)
seeds = st.integers(min_value=0, max_value=2**63 - 1)

# Every action a client could send, legal or not.
UNIVERSE: tuple[Action, ...] = (
    *(PlayCard(c) for c in DECK),
    *(MakeCall(c) for c in Call),
    *(ChooseDealer(s) for s in range(-1, 7)),
    *(CutDeck(p) for p in range(41)),
    *(SendSignal(s) for s in Signal),
    *(SendDirective(d) for d in Directive),
)


def is_message(action: Action) -> bool:
    return isinstance(action, SendSignal | SendDirective)


# Calls that can end a manche at once are drawn rarely, so that random matches
# also reach long hands, third tricks and high scores.
_RARE = {Call.MI_FALTA, Call.RESTOU_Y_TROUCOU, Call.RESTOU, Call.ALIBARESTOU_CON_FLOR}


def weight(action: Action) -> float:
    if isinstance(action, PlayCard):
        return 6.0
    if isinstance(action, MakeCall):
        if action.call in _RARE:
            return 0.15
        if action.call in (Call.PASS, Call.ACCEPT):
            return 3.0
    return 1.0


def random_match(
    options: RuleOptions, seed: int, play_seed: int, *, messages: bool = True
) -> Iterator[tuple[GameState, tuple[Event, ...], int | None, Action | None]]:
    """Yield (state, events, seat, action) for every step of one random match.

    Actions are drawn from the legal lists; signals and directives (which never
    move the game) are only sent now and then, so every match ends.
    """
    rng = random.Random(play_seed)
    transition = new_game(options, seed=seed)
    for _ in range(20_000):
        state = transition.state
        seat = state.to_act
        if seat is None:
            yield state, transition.events, None, None
            return
        legal = legal_actions(state, seat)
        game_moves = [a for a in legal if not is_message(a)]
        if messages and rng.random() < 0.05:
            sender = rng.randrange(6)
            chatter = [a for a in legal_actions(state, sender) if is_message(a)]
            if chatter:
                action = rng.choice(chatter)
                yield state, transition.events, sender, action
                transition = apply_action(state, sender, action)
                continue
        action = rng.choices(game_moves, [weight(a) for a in game_moves])[0]
        yield state, transition.events, seat, action
        transition = apply_action(state, seat, action)
    raise AssertionError("the match did not end in 20,000 actions")


def card_locations(state: GameState) -> list[Card]:
    cards = [c for hand in state.hands for c in hand]
    cards += [c for t in state.tricks for c in t.cards]
    cards += list(state.trick_cards)
    cards += list(state.stock)
    return cards


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(options=options_strategy, seed=seeds, play_seed=seeds)
def test_random_legal_play_ends_and_keeps_every_invariant(
    options: RuleOptions, seed: int, play_seed: int
) -> None:
    previous: GameState | None = None
    last: GameState | None = None
    for state, _events, seat, action in random_match(options, seed, play_seed):
        last = state
        # Exactly one seat is expected to act until the match ends.
        if state.phase != Phase.MATCH_OVER:
            assert state.to_act is not None
            actors = [
                s for s in range(6) if any(not is_message(a) for a in legal_actions(state, s))
            ]
            assert actors == [state.to_act]
        else:
            assert state.to_act is None
            assert all(legal_actions(state, s) == () for s in range(6))
        # The 40 cards are conserved.
        if state.phase == Phase.PLAY:
            cards = card_locations(state)
            assert sorted(cards) == list(DECK)
            for s in range(6):
                assert set(state.hands[s]) <= set(state.dealt[s])
        # Scores never fall inside a manche.
        if previous is not None and previous.manches == state.manches:
            assert state.scores[0] >= previous.scores[0]
            assert state.scores[1] >= previous.scores[1]
        if previous is not None:
            assert state.hands_played >= previous.hands_played
        assert all(0 <= s < options.target_score for s in state.scores)
        previous = state
        if seat is None:
            break
        assert action is not None
    assert last is not None
    assert last.phase == Phase.MATCH_OVER
    assert last.winner is not None
    assert last.manches[last.winner] == options.manches_to_win


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(options=options_strategy, seed=seeds, play_seed=seeds)
def test_every_action_outside_the_legal_list_is_refused_and_changes_nothing(
    options: RuleOptions, seed: int, play_seed: int
) -> None:
    rng = random.Random(play_seed)
    for state, _events, seat, _action in random_match(options, seed, play_seed):
        before = encode_state(state)
        probe_seats = [state.to_act] if state.to_act is not None else []
        probe_seats.append(rng.randrange(6))
        for probe in probe_seats:
            assert probe is not None
            legal = set(legal_actions(state, probe))
            for candidate in UNIVERSE:
                if candidate in legal:
                    continue
                try:
                    apply_action(state, probe, candidate)
                except IllegalAction as exc:
                    assert exc.reason.value in {
                        "NOT_YOUR_TURN",
                        "CARD_NOT_IN_HAND",
                        "NO_FLOR",
                        "NOT_ALLOWED_NOW",
                        "GAME_OVER",
                    }
                else:
                    raise AssertionError(f"seat {probe} {candidate} was accepted but is not legal")
            # And everything in the list is accepted.
            for candidate in legal:
                apply_action(state, probe, candidate)
        assert encode_state(state) == before
        if seat is None:
            break


def hidden_cards(state: GameState, seat: int) -> list[Card]:
    revealed = set(state.revealed)
    hidden = [c for s in range(6) if s != seat for c in state.hands[s] if c not in revealed]
    return hidden + list(state.stock)


def reshuffle_hidden(state: GameState, seat: int, rng: random.Random) -> GameState:
    """The same state with the cards hidden from ``seat`` dealt differently."""
    hidden = hidden_cards(state, seat)
    shuffled = hidden[:]
    rng.shuffle(shuffled)
    mapping = dict(zip(hidden, shuffled, strict=True))

    def swap(cards: tuple[Card, ...]) -> tuple[Card, ...]:
        return tuple(mapping.get(c, c) for c in cards)

    return replace(
        state,
        hands=tuple(swap(h) if s != seat else h for s, h in enumerate(state.hands)),
        dealt=tuple(swap(h) if s != seat else h for s, h in enumerate(state.dealt)),
        stock=tuple(sorted(swap(state.stock))),
    )


def cards_in(value: object) -> Iterator[Card]:
    """Every card anywhere inside a view (recursively)."""
    if isinstance(value, Card):
        yield value
    elif isinstance(value, tuple | list):
        for item in value:
            yield from cards_in(item)
    elif is_dataclass(value) and not isinstance(value, type):
        for f in fields(value):
            yield from cards_in(getattr(value, f.name))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(options=options_strategy, seed=seeds, play_seed=seeds)
def test_a_view_does_not_depend_on_cards_hidden_from_it(
    options: RuleOptions, seed: int, play_seed: int
) -> None:
    rng = random.Random(play_seed ^ 0x5EED)
    for step, (state, events, seat, _action) in enumerate(random_match(options, seed, play_seed)):
        if state.phase == Phase.PLAY and step % 3 == 0:
            for viewer in range(6):
                view = view_for(state, viewer, events)
                other = reshuffle_hidden(state, viewer, rng)
                assert view_for(other, viewer, events) == view
                # No view ever holds another seat's unrevealed cards (draws excepted:
                # they come from a separate pack).
                secret = set(hidden_cards(state, viewer))
                leaked = set(cards_in(replace(view, draws=(), events=()))) & secret
                assert not leaked, f"seat {viewer} sees {sorted(map(str, leaked))}"
                dealt_to_others = [
                    e for e in view.events if isinstance(e, CardsDealt) and e.seat != viewer
                ]
                assert not dealt_to_others
            spectator = view_for(state, None, events)
            assert spectator.hand == () and spectator.legal_actions == ()
            assert not any(isinstance(e, CardsDealt) for e in spectator.events)
        if seat is None:
            break


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(options=options_strategy, seed=seeds, play_seed=seeds)
def test_every_state_and_event_round_trips_through_the_codec(
    options: RuleOptions, seed: int, play_seed: int
) -> None:
    for state, events, seat, action in random_match(options, seed, play_seed):
        data = encode_state(state)
        assert decode_state(data) == state
        assert len(data) < 160
        assert decode_events(encode_events(events)) == events
        if action is not None and seat is not None:
            timed_out = (TurnTimedOut(seat, action),)
            assert decode_events(encode_events(timed_out)) == timed_out
        if seat is None:
            break


@settings(max_examples=10, deadline=None)
@given(seed=seeds, play_seed=seeds)
def test_the_same_seed_and_actions_replay_the_same_match(seed: int, play_seed: int) -> None:
    first = [encode_state(s) for s, *_ in random_match(RuleOptions(), seed, play_seed)]
    second = [encode_state(s) for s, *_ in random_match(RuleOptions(), seed, play_seed)]
    assert first == second


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(options=options_strategy, seed=seeds, play_seed=seeds)
def test_the_default_action_is_always_legal_and_never_a_bet(
    options: RuleOptions, seed: int, play_seed: int
) -> None:
    for state, _events, seat, _action in random_match(options, seed, play_seed):
        default = default_action(state)
        if state.to_act is None:
            assert default is None
        else:
            assert default in legal_actions(state, state.to_act)
            if isinstance(default, MakeCall):
                assert default.call in (Call.PASS, Call.FOLD)
            if isinstance(default, PlayCard):
                classes = trick_class(options.perique_trick_rank)
                hand = state.hands[state.to_act]
                assert classes[default.card] == max(classes[c] for c in hand)
        if seat is None:
            break
