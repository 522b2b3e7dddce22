"""Property tests of the variants.md rule sets (``french_truc``, ``sackson_truc``,
``partnership_truc``, ``catalan_truc``): random legal play from random seeds and
rule options, every step checked by a :class:`Referee` written from
variants.md alone (it shares no code with :mod:`truc_rules.family`).

At every state the referee says which seat acts and exactly what every seat may
do (cards as an instruction allows, the calls whose conditions hold, the
answers of the pending call, the signals and directives of the seat's role);
every other action, for every seat including ones that do not exist, must be
refused with the reason of the V6 precedence and change nothing. At every step
it says where the stake goes, what the hand scores and when it ends, and what
the action's events must tell (the card or call, each trick, each credit with
the running score, the end of a hand, game and match, each deal); where each
card of the pack is (hands, tricks, the trick in progress, the stock, and the
hands a redeal set aside); and that a seat's view is the same however the cards
hidden from it lie. Every state round-trips through the codec, and the default
action is always legal.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Final

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from truc_rules import catalan_truc, family, french_truc, partnership_truc, registry, sackson_truc
from truc_rules.actions import (
    Action,
    Call,
    ChooseDealer,
    CutDeck,
    Directive,
    MakeCall,
    PlayCard,
    SendDirective,
    SendSignal,
    Signal,
)
from truc_rules.cards import DECK, PIQUET_CARDS, Card
from truc_rules.errors import IllegalAction, Reason
from truc_rules.events import (
    Called,
    CardPlayed,
    CardsDealt,
    DirectiveSent,
    Event,
    HandEnded,
    HandStarted,
    MancheEnded,
    MatchEnded,
    PointsCredited,
    SignalSent,
    StakeRaised,
    TrickCompleted,
)
from truc_rules.family import FamilyOptions, FamilyRules, FamilyState, Phase, Prompt
from truc_rules.rule_set import RuleSet

# ---------------------------------------------------------------------- the rules, from variants.md

PIQUET_ORDERS: Final = {"seven_eight": "7 8 A K Q J T 9", "seven_ace": "7 A K Q J T 9 8"}
"""V2.1: highest first; the rank is the first letter of a card's text."""
CATALAN_ORDER: Final = "3 2 1 K N J 7 6 5 4"
"""V5.1."""


@dataclass(frozen=True)
class Spec:
    """One rule set as variants.md V2-V5 describe it."""

    rules: FamilyRules
    pack: tuple[Card, ...]
    target: int
    ladder: str
    """"plus_two" (V2.3), "double" (V3) or "truc_retruc" (V5.3)."""
    mon_reste: bool
    redeal: bool
    governors: bool
    leader_ties: bool
    """V4.4: partners' tied top cards win only for a side that led, else spoil."""
    signals: Mapping[Signal, str]
    """Each signal and the rank it tells of (V4.5, V5.4)."""
    directives: tuple[Directive, ...]
    seat_choices: tuple[int, ...]


SPECS: Final = {
    RuleSet.FRENCH_TRUC: Spec(
        french_truc.RULES, PIQUET_CARDS, 12, "plus_two", True, True, False, False, {}, (), (2,)
    ),
    RuleSet.SACKSON_TRUC: Spec(
        sackson_truc.RULES, PIQUET_CARDS, 16, "double", True, True, False, False, {}, (), (2,)
    ),
    RuleSet.PARTNERSHIP_TRUC: Spec(
        partnership_truc.RULES,
        PIQUET_CARDS,
        12,
        "plus_two",
        True,
        True,
        True,
        True,
        {Signal.SEVEN: "7", Signal.EIGHT: "8", Signal.ACE: "A"},
        (Directive.PLAY_SEVEN, Directive.PLAY_LOW, Directive.LEAVE_IT_TO_ME),
        (4,),
    ),
    RuleSet.CATALAN_TRUC: Spec(
        catalan_truc.RULES,
        DECK,
        12,
        "truc_retruc",
        False,
        False,
        False,
        False,
        {Signal.TRES: "3", Signal.DUS: "2", Signal.AS: "1"},
        (
            Directive.LET_THEM_TAKE_IT,
            Directive.PLAY_HIGH,
            Directive.PLAY_LOW,
            Directive.TRUC,
            Directive.STAY_QUIET,
        ),
        (4, 2),
    ),
}
RULE_SETS: Final = tuple(SPECS)

RAISES: Final = (Call.RAISE, Call.TRUC, Call.RETRUC)
ANSWERS: Final = {
    Call.RAISE: (Call.ACCEPT, Call.FOLD),
    Call.TRUC: (Call.ACCEPT, Call.FOLD),
    Call.RETRUC: (Call.ACCEPT, Call.FOLD),
    Call.MON_RESTE: (Call.FOLD, Call.MON_RESTE),
    Call.PROPOSE_REDEAL: (Call.ACCEPT, Call.REFUSE),
}
"""V6: the answers of each call."""

UNIVERSE: Final[tuple[Action, ...]] = (
    *(PlayCard(c) for c in Card),
    *(MakeCall(c) for c in Call),
    *(SendSignal(s) for s in Signal),
    *(SendDirective(d) for d in Directive),
    *(ChooseDealer(s) for s in range(-1, 7)),
    *(CutDeck(p) for p in (0, 1, 20, 39)),
)
"""Every action a client could send to any rule set: both packs, every call."""

UNDECIDED: Final = "undecided"
NOBODY: Final = "nobody"
GAME: Final = -1
"""Points that mean "the game" (V2.4, V6)."""


def rank(card: Card) -> str:
    return str(card)[0]


def strengths(options: FamilyOptions) -> dict[Card, int]:
    """Each card of the rule set's pack and its strength (higher wins)."""
    spec = SPECS[options.rule_set]
    if options.rule_set == RuleSet.CATALAN_TRUC:
        order = CATALAN_ORDER
    else:
        assert options.trick_order is not None
        order = PIQUET_ORDERS[options.trick_order.value]
    ranks = order.split()
    return {c: len(ranks) - ranks.index(rank(c)) for c in spec.pack}


def next_stake(ladder: str, stake: int) -> int:
    """V2.3, V3, V5.3."""
    if ladder == "double":
        return stake * 2
    if ladder == "plus_two":
        return 2 if stake == 1 else stake + 2
    return stake + 1


def hand_winner(winners: list[int | None]) -> int | str:
    """V1.4 (rules.md §3.5): the team that won the hand, NOBODY, or UNDECIDED."""
    won = [w for w in winners if w is not None]
    for team in (0, 1):
        if won.count(team) >= 2:
            return team
    if len(winners) >= 2 and winners[0] is None and winners[1] is not None:
        return winners[1]
    if len(winners) >= 2 and winners[0] is not None and winners[1] is None:
        return winners[0]
    if len(winners) == 3:
        if winners[0] is None and winners[1] is None:
            return NOBODY if winners[2] is None else winners[2]
        if winners[2] is None:  # one each, third spoiled: the earlier
            return winners[0] if winners[0] is not None else NOBODY
    return UNDECIDED


def is_message(action: Action) -> bool:
    return isinstance(action, SendSignal | SendDirective)


# -------------------------------------------------------------------------------------- the referee


class Referee:
    """Follows one match action by action and says, from variants.md, what must
    be legal and what each action must do. It keeps its own record of the hand
    (the stake, raises, mon reste, the redeal, instructions, cards set aside)
    and reads from the engine's state only the cards and the table."""

    def __init__(self, state: FamilyState) -> None:
        self.options = state.options
        self.spec = SPECS[state.options.rule_set]
        self.power = strengths(state.options)
        self.seats = state.seats
        self.target = state.options.target_score
        assert self.seats in self.spec.seat_choices
        self.new_hand()

    def new_hand(self) -> None:
        self.stake = 1
        self.raised = False
        """The seat on turn made its one raise of this turn (V1.7)."""
        self.any_raise = False
        self.mon_reste = False
        self.redeal_proposed = False
        self.pending: tuple[Call, int] | None = None
        self.instructions: list[Directive | None] = [None] * self.seats
        self.set_aside: list[Card] = []

    # ----------------------------------------------------------------- tricks

    def judge(self, leader: int, cards: tuple[Card, ...]) -> tuple[int | None, int]:
        """V1.3, V1.4, V4.4, V6: (the team that won the trick or None, who leads next)."""
        best = max(self.power[c] for c in cards)
        top = [(leader + i) % self.seats for i, c in enumerate(cards) if self.power[c] == best]
        if len({s % 2 for s in top}) == 2:
            return None, leader
        if len(top) == 1 or not self.spec.leader_ties:
            return top[0] % 2, top[0]
        if leader in top:
            return leader % 2, leader
        return None, leader

    def trick_winners(self, state: FamilyState) -> list[int | None]:
        return [self.judge(t.leader, t.cards)[0] for t in state.tricks]

    def decided(self, state: FamilyState) -> bool:
        return hand_winner(self.trick_winners(state)) != UNDECIDED

    def governors(self, state: FamilyState) -> tuple[int, ...]:
        eldest = (state.dealer + 1) % self.seats
        return (state.dealer, eldest) if self.spec.governors else ()

    def answerer(self, state: FamilyState, call: Call, caller: int) -> int:
        """V2.3, V2.5, V4.2, V4.3, V5.3."""
        if call == Call.PROPOSE_REDEAL:
            return state.dealer
        if self.spec.governors:
            return next(g for g in self.governors(state) if g % 2 != caller % 2)
        return (caller + 1) % self.seats

    # ----------------------------------------------------------------- what is legal

    def messages(self, state: FamilyState, seat: int) -> set[Action]:
        """V4.5, V5.4, V6: honest signals and the directives of the seat's role."""
        spec = self.spec
        if self.seats == 2 or not spec.signals:
            return set()
        held = {rank(c) for c in state.hands[seat]}
        signals: set[Action] = {SendSignal(s) for s, r in spec.signals.items() if r in held}
        directives: set[Action] = {SendDirective(d) for d in spec.directives}
        if spec.governors:
            return directives if seat in self.governors(state) else signals
        return signals | directives

    def playable(self, state: FamilyState, seat: int) -> tuple[Card, ...]:
        """V4.5, V6: the seat's cards, as the instruction binding it allows."""
        hand = state.hands[seat]
        instruction = self.instructions[seat]
        if instruction == Directive.PLAY_SEVEN:
            return tuple(c for c in hand if rank(c) == "7") or hand
        if instruction in (Directive.PLAY_LOW, Directive.LEAVE_IT_TO_ME):
            low = min(self.power[c] for c in hand)
            return tuple(c for c in hand if self.power[c] == low)
        return hand

    def turn_calls(self, state: FamilyState, seat: int) -> set[Call]:
        """V1.6, V1.7, V2.3-V2.5, V4.2, V4.3, V5.3, V6."""
        spec = self.spec
        calls: set[Call] = set()
        decided = self.decided(state)
        if not decided and not self.mon_reste and not self.raised:
            if self.stake < self.target:
                if spec.ladder != "truc_retruc":
                    calls.add(Call.RAISE)
                elif self.stake in (1, 2):
                    calls.add(Call.TRUC if self.stake == 1 else Call.RETRUC)
                if spec.mon_reste and self.target - state.scores[seat % 2] > self.stake:
                    calls.add(Call.MON_RESTE)
            first_turn = not state.tricks and not state.trick_cards and not self.any_raise
            eldest = (state.dealer + 1) % self.seats
            if spec.redeal and seat == eldest and first_turn and not self.redeal_proposed:
                calls.add(Call.PROPOSE_REDEAL)
        if not decided and (not spec.governors or seat in self.governors(state)):
            calls.add(Call.FOLD)
        return calls

    def legal(self, state: FamilyState, seat: int) -> set[Action]:
        if state.phase != Phase.PLAY or not 0 <= seat < self.seats:
            return set()
        out = self.messages(state, seat)
        if seat != state.to_act:
            return out
        if self.pending is None:
            out |= {PlayCard(c) for c in self.playable(state, seat)}
            out |= {MakeCall(c) for c in self.turn_calls(state, seat)}
        else:
            out |= {MakeCall(c) for c in ANSWERS[self.pending[0]]}
        return out

    def refusal(self, state: FamilyState, seat: int, action: Action) -> Reason:
        """V6, scenarios.md: the reason an action outside the legal list is refused."""
        if state.phase == Phase.MATCH_OVER:
            return Reason.GAME_OVER
        if is_message(action):
            # Messages may be sent at any moment of a hand: never out of turn.
            return Reason.NOT_YOUR_TURN if state.phase == Phase.NO_DEAL else Reason.NOT_ALLOWED_NOW
        if seat != state.to_act:
            return Reason.NOT_YOUR_TURN
        if isinstance(action, PlayCard):
            if self.pending is not None:
                return Reason.NOT_ALLOWED_NOW
            if action.card not in state.hands[seat]:
                return Reason.CARD_NOT_IN_HAND
        return Reason.NOT_ALLOWED_NOW

    # ----------------------------------------------------------------- checks

    def check_state(self, state: FamilyState) -> None:
        """Everything the referee knows about one state."""
        seats = self.seats
        assert state.seats == seats
        assert all(0 <= s < self.target for s in state.scores)
        if state.phase == Phase.MATCH_OVER:
            assert state.to_act is None and state.winner is not None
            assert state.manches[state.winner] == self.options.manches_to_win
            assert all(registry.legal_actions(state, s) == () for s in range(-1, seats + 1))
            return
        assert state.phase == Phase.PLAY, "seeded games never run out of deals"
        # V1.3, V1.4, V4.4: each trick as judged, each led by the right seat.
        eldest = (state.dealer + 1) % seats
        leader = eldest
        for trick in state.tricks:
            assert trick.leader == leader
            team, leader = self.judge(trick.leader, trick.cards)
            assert trick.winner_team == team
        assert state.leader == leader
        assert len(state.tricks) <= 3 and len(state.trick_cards) < seats
        # Who acts: the seat on turn, or the one answering the pending call.
        assert state.stake == self.stake
        if self.pending is None:
            assert state.pending is None and state.prompt == Prompt.TURN
            assert state.to_act == (leader + len(state.trick_cards)) % seats
        else:
            call, caller = self.pending
            assert state.pending is not None and state.prompt != Prompt.TURN
            assert (state.pending.call, state.pending.caller) == (call, caller)
            assert state.to_act == state.pending.answerer == self.answerer(state, call, caller)
        # Exactly one seat acts, and only it has actions other than messages.
        actors = []
        for seat in range(-1, seats + 1):
            listed = registry.legal_actions(state, seat)
            assert len(set(listed)) == len(listed), f"seat {seat} has duplicates: {listed}"
            assert set(listed) == self.legal(state, seat), (
                f"seat {seat}: the engine lists {sorted(map(str, listed))}, "
                f"variants.md {sorted(map(str, self.legal(state, seat)))}"
            )
            if any(not is_message(a) for a in listed):
                actors.append(seat)
        assert actors == [state.to_act]
        # Every card of the pack is in exactly one place.
        where = [c for hand in state.hands for c in hand]
        where += [c for trick in state.tricks for c in trick.cards]
        where += [*state.trick_cards, *state.stock, *self.set_aside]
        assert sorted(where) == sorted(self.spec.pack)
        for seat in range(seats):
            assert set(state.hands[seat]) <= set(state.dealt[seat])
            assert len(state.hands[seat]) == 3 - len(state.tricks) - (
                (seat - leader) % seats < len(state.trick_cards)
            )

    def check_events(
        self,
        before: FamilyState,
        seat: int,
        action: Action,
        after: FamilyState,
        events: tuple[Event, ...],
    ) -> None:
        """The events of one action tell what happened, in order, complete
        enough for a client to narrate the game (call before :meth:`check_step`)."""
        seats = self.seats
        kinds = [type(e) for e in events]
        if isinstance(action, SendSignal):
            assert events == (SignalSent(seat, action.signal),)
            return
        if isinstance(action, SendDirective):
            assert events == (DirectiveSent(seat, action.directive),)
            return
        if isinstance(action, PlayCard):
            assert events[0] == CardPlayed(seat, action.card, len(before.tricks) + 1)
            cards = (*before.trick_cards, action.card)
            completed = [e for e in events if isinstance(e, TrickCompleted)]
            if len(cards) == seats:
                team, _ = self.judge(before.leader, cards)
                assert len(completed) == 1 and completed[0].trick == len(before.tricks) + 1
                assert completed[0].winner_team == team
            else:
                assert not completed
        else:
            assert isinstance(action, MakeCall)
            assert events[0] == Called(seat, action.call)
            accepted = self.pending is not None and action.call in (Call.ACCEPT, Call.MON_RESTE)
            raised = [e for e in events if isinstance(e, StakeRaised)]
            if accepted and self.pending is not None and self.pending[0] != Call.PROPOSE_REDEAL:
                stake = 0 if action.call == Call.MON_RESTE else after.stake
                assert raised == [StakeRaised(self.pending[0], stake)]
            else:
                assert not raised
        # Points: each credit says the running score; together they are the score change.
        running = list(before.scores)
        for event in events:
            if isinstance(event, PointsCredited):
                running[event.team] += event.points
                assert event.points > 0 and tuple(running) == event.scores
        won = [t for t in (0, 1) if after.manches[t] > before.manches[t]]
        final = after.history[-1][1:] if won else after.scores
        assert tuple(running) == tuple(final)
        assert (MancheEnded in kinds) == bool(won)
        assert (MatchEnded in kinds) == (after.phase == Phase.MATCH_OVER)
        assert kinds.count(HandEnded) == after.hands_played - before.hands_played
        # A new hand, or a redeal, deals each seat its cards, privately.
        started = [e for e in events if isinstance(e, HandStarted)]
        dealt = [e for e in events if isinstance(e, CardsDealt)]
        if after.hand_number != before.hand_number:
            assert started == [
                HandStarted(
                    after.hand_number,
                    after.dealer,
                    (after.dealer + 1) % seats,
                    -1,
                    after.manches[0] + after.manches[1] + 1,
                    after.belle,
                )
            ]
        else:
            assert not started
        if started or after.dealt != before.dealt:
            assert [(e.seat, e.cards) for e in dealt] == list(enumerate(after.dealt))
        else:
            assert not dealt

    def check_step(
        self, before: FamilyState, seat: int, action: Action, after: FamilyState
    ) -> None:
        """What ``action`` must have done (V1.4-V1.7, V2.3-V2.5, V4, V5.3, V6)."""
        seats = self.seats
        result: tuple[int, int] | None = None
        """(team, points or GAME) when the action ends the hand with a score."""
        ends = False
        redeal = False
        if isinstance(action, PlayCard):
            cards = (*before.trick_cards, action.card)
            if len(cards) == seats:
                winners = [*self.trick_winners(before), self.judge(before.leader, cards)[0]]
                won = hand_winner(winners)
                if len(winners) == 3 or (won != UNDECIDED and not self.options.play_out_all_tricks):
                    ends = True
                    if isinstance(won, int):
                        result = (won, GAME if self.mon_reste else self.stake)
            self.raised = False
            self.instructions[seat] = None
        elif isinstance(action, MakeCall):
            call = action.call
            if self.pending is None:
                if call == Call.FOLD:
                    ends = True
                    result = (1 - seat % 2, GAME if self.mon_reste else self.stake)
                else:
                    if call != Call.PROPOSE_REDEAL:
                        self.raised = self.any_raise = True
                    else:
                        self.redeal_proposed = True
                    self.pending = (call, seat)
            else:
                pending, caller = self.pending
                self.pending = None
                if call == Call.FOLD:
                    ends = True
                    result = (caller % 2, self.stake)
                elif pending == Call.PROPOSE_REDEAL:
                    redeal = call == Call.ACCEPT
                elif pending == Call.MON_RESTE:
                    self.mon_reste = True
                else:
                    self.stake = next_stake(self.spec.ladder, self.stake)
        elif isinstance(action, SendDirective) and self.spec.governors:
            self.instructions[(seat + 2) % seats] = action.directive

        if redeal:
            # V2.5: the hands set aside, three new cards each from the rest of the
            # pack, one at a time from eldest; eldest acts again.
            eldest = (before.dealer + 1) % seats
            self.set_aside += [c for hand in before.hands for c in hand]
            dealt: list[list[Card]] = [[] for _ in range(seats)]
            for i, card in enumerate(before.stock[: 3 * seats]):
                dealt[(eldest + i) % seats].append(card)
            assert after.hands == after.dealt == tuple(tuple(h) for h in dealt)
            assert after.stock == before.stock[3 * seats :]
            assert after.to_act == eldest
        if not ends:
            assert (after.scores, after.manches, after.hand_number, after.dealer) == (
                before.scores,
                before.manches,
                before.hand_number,
                before.dealer,
            )
            assert after.hands_played == before.hands_played
            return
        # The hand ended: its score, maybe the game and the match, then the next deal.
        assert after.hands_played == before.hands_played + 1
        game_over = False
        if result is None:
            assert after.scores == before.scores and after.manches == before.manches
        else:
            team, points = result
            score = self.target if points == GAME else before.scores[team] + points
            final = list(before.scores)
            final[team] = min(score, self.target)
            if score < self.target:
                assert after.scores == tuple(final) and after.manches == before.manches
            else:
                game_over = True
                manches = list(before.manches)
                manches[team] += 1
                assert after.manches == tuple(manches)
                assert after.history == (*before.history, (team, final[0], final[1]))
                assert after.scores == (0, 0)
        if game_over and max(after.manches) == self.options.manches_to_win:
            assert after.phase == Phase.MATCH_OVER
            return
        # V1.2: the deal passes to dealer + 1, across games; eldest leads.
        assert after.phase == Phase.PLAY
        assert after.hand_number == before.hand_number + 1
        assert after.dealer == (before.dealer + 1) % seats
        assert after.to_act == (after.dealer + 1) % seats
        assert after.tricks == () and after.trick_cards == ()
        self.new_hand()


# ----------------------------------------------------------------------------------- random matches


def options_for(rule_set: RuleSet) -> st.SearchStrategy[FamilyOptions]:
    """Random rule options of ``rule_set`` (short targets make matches quick and
    reach the stake ceiling; target 1 leaves no raise at all)."""
    spec = SPECS[rule_set]
    values: dict[str, st.SearchStrategy[object]] = {
        "target_score": st.sampled_from([spec.target, 6, 3, 1]),
        "manches_to_win": st.sampled_from([2, 2, 1, 3]),
        "play_out_all_tricks": st.booleans(),
    }
    if spec.pack == PIQUET_CARDS:
        values["trick_order"] = st.sampled_from(sorted(PIQUET_ORDERS))
    if len(spec.seat_choices) > 1:
        values["seats"] = st.sampled_from(spec.seat_choices)
    return st.fixed_dictionaries(values).map(spec.rules.options_from_mapping)


seeds = st.integers(min_value=0, max_value=2**63 - 1)

_WEIGHTS: Final = {
    Call.ACCEPT: 3.0,
    Call.REFUSE: 1.0,
    Call.FOLD: 0.4,
    Call.MON_RESTE: 0.3,
    Call.PROPOSE_REDEAL: 1.5,
}


def weight(action: Action) -> float:
    if isinstance(action, PlayCard):
        return 5.0
    if isinstance(action, MakeCall):
        return _WEIGHTS.get(action.call, 1.0)
    return 1.0


@dataclass(frozen=True, slots=True)
class Step:
    state: FamilyState
    events: tuple[Event, ...]
    seat: int
    action: Action
    after: FamilyState
    after_events: tuple[Event, ...]


def random_match(
    options: FamilyOptions, seed: int, play_seed: int, *, chatty: float | None = None
) -> Iterator[Step]:
    """Every step of one random match of legal actions, to the end. Messages
    (which never move the game) are sent by a random seat with probability
    ``chatty`` at each step (by default 0.3 in partnership_truc, else 0.1)."""
    rng = random.Random(play_seed)
    if chatty is None:
        chatty = 0.3 if options.rule_set == RuleSet.PARTNERSHIP_TRUC else 0.1
    transition = SPECS[options.rule_set].rules.new_game(options, seed=seed)
    for _ in range(20_000):
        state = transition.state
        seat = state.to_act
        if seat is None:
            return
        action: Action | None = None
        if rng.random() < chatty:
            sender = rng.randrange(state.seats)
            chatter = [a for a in registry.legal_actions(state, sender) if is_message(a)]
            if chatter:
                seat, action = sender, rng.choice(chatter)
        if action is None:
            moves = [a for a in registry.legal_actions(state, seat) if not is_message(a)]
            action = rng.choices(moves, [weight(a) for a in moves])[0]
        after = family.apply_action(state, seat, action)
        yield Step(state, transition.events, seat, action, after.state, after.events)
        transition = after
    raise AssertionError("the match did not end in 20,000 actions")


def refereed(
    options: FamilyOptions, seed: int, play_seed: int, *, chatty: float | None = None
) -> Iterator[tuple[Step, Referee]]:
    """The steps of a random match, each checked by the referee before it is yielded."""
    referee: Referee | None = None
    last: FamilyState | None = None
    for step in random_match(options, seed, play_seed, chatty=chatty):
        if referee is None:
            referee = Referee(step.state)
            referee.check_state(step.state)
        referee.check_events(step.state, step.seat, step.action, step.after, step.after_events)
        referee.check_step(step.state, step.seat, step.action, step.after)
        referee.check_state(step.after)
        last = step.after
        yield step, referee
    assert last is not None and last.phase == Phase.MATCH_OVER


# ----------------------------------------------------------------------------------- the properties

_SETTINGS: Final = settings(
    max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
PROBED: Final = 0.15
"""The share of states probed with every action of UNIVERSE (match ends: all)."""


@pytest.mark.parametrize("rule_set", RULE_SETS)
@_SETTINGS
@given(data=st.data(), seed=seeds, play_seed=seeds)
def test_random_legal_play_follows_variants_md_to_the_end(
    rule_set: RuleSet, data: st.DataObject, seed: int, play_seed: int
) -> None:
    """Each step checked by the referee: who acts and what is legal, the stake,
    every hand's score, the deal, where every card is; scores never fall within
    a game; the match ends; the same seed and actions replay it exactly."""
    options = data.draw(options_for(rule_set))
    played: list[tuple[int, Action]] = []
    final: FamilyState | None = None
    for step, _referee in refereed(options, seed, play_seed):
        before, after = step.state, step.after
        if after.manches == before.manches:
            assert after.scores[0] >= before.scores[0]
            assert after.scores[1] >= before.scores[1]
        played.append((step.seat, step.action))
        final = after
    assert final is not None and final.winner is not None
    state = SPECS[rule_set].rules.new_game(options, seed=seed).state
    for seat, action in played:
        state = family.apply_action(state, seat, action).state
    assert registry.encode_state(state) == registry.encode_state(final)


@pytest.mark.parametrize("rule_set", RULE_SETS)
@_SETTINGS
@given(data=st.data(), seed=seeds, play_seed=seeds)
def test_every_action_outside_the_legal_list_is_refused_by_v6_and_changes_nothing(
    rule_set: RuleSet, data: st.DataObject, seed: int, play_seed: int
) -> None:
    """Every card of both packs, every call, signal and directive, the other
    rule set's actions, for the seat to act and for a random seat (out-of-range
    ones included): refused with V6's reason, the state untouched; everything
    listed is accepted."""
    options = data.draw(options_for(rule_set))
    rng = random.Random(play_seed ^ 0xAC7)
    probes = 0
    for step, referee in refereed(options, seed, play_seed):
        # The referee has followed the match to step.after.
        state = step.after
        if rng.random() > PROBED and state.to_act is not None:
            continue
        snapshot = replace(state)
        data_before = registry.encode_state(state)
        seats = [state.to_act if state.to_act is not None else 0]
        seats.append(rng.randrange(-1, state.seats + 1))
        for seat in seats:
            legal = set(registry.legal_actions(state, seat))
            for action in UNIVERSE:
                if action in legal:
                    registry.apply_action(state, seat, action)
                    continue
                with pytest.raises(IllegalAction) as refused:
                    registry.apply_action(state, seat, action)
                assert refused.value.reason == referee.refusal(state, seat, action), (
                    f"seat {seat} {action}: {refused.value}"
                )
                probes += 1
        assert state == snapshot
        assert registry.encode_state(state) == data_before
    assert probes > 0


def hidden_cards(state: FamilyState, seat: int) -> list[Card]:
    return [c for s in range(state.seats) if s != seat for c in state.hands[s]] + list(state.stock)


def reshuffle_hidden(state: FamilyState, seat: int, rng: random.Random) -> FamilyState:
    """The same state with the cards ``seat`` cannot see (other hands, the stock)
    lying elsewhere among those places."""
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
        stock=swap(state.stock),
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


@pytest.mark.parametrize("rule_set", RULE_SETS)
@_SETTINGS
@given(data=st.data(), seed=seeds, play_seed=seeds)
def test_a_view_does_not_depend_on_the_cards_hidden_from_it(
    rule_set: RuleSet, data: st.DataObject, seed: int, play_seed: int
) -> None:
    """Other seats' hands and the stock permuted among themselves: the seat's view
    (its events too) is the same, and stays the same after the next action when
    that action is possible in both (a redeal excepted: it deals from the
    stock); no view holds a card hidden from it; a spectator holds none."""
    options = data.draw(options_for(rule_set))
    rng = random.Random(play_seed ^ 0x5EED)
    for step, _referee in refereed(options, seed, play_seed):
        state, events = step.state, step.events
        if rng.random() > 0.3:
            continue
        for viewer in range(state.seats):
            view = registry.view_for(state, viewer, events)
            other = reshuffle_hidden(state, viewer, rng)
            assert registry.view_for(other, viewer, events) == view
            secret = set(hidden_cards(state, viewer))
            # (A hand's events may name cards played before the next deal shuffled
            # them back into the hidden stock: played cards are public.)
            leaked = set(cards_in(replace(view, events=()))) & secret
            assert not leaked, f"seat {viewer} sees {sorted(map(str, leaked))}"
            assert not [e for e in view.events if isinstance(e, CardsDealt) and e.seat != viewer]
            redeal = step.action == MakeCall(Call.ACCEPT) and state.prompt == Prompt.REDEAL_ANSWER
            if redeal or step.action not in registry.legal_actions(other, step.seat):
                continue
            moved = family.apply_action(other, step.seat, step.action)
            assert registry.view_for(moved.state, viewer, moved.events) == registry.view_for(
                step.after, viewer, step.after_events
            )
        spectator = registry.view_for(state, None, events)
        assert spectator.hand == () and spectator.legal_actions == ()
        assert not set(cards_in(replace(spectator, events=()))) & set(hidden_cards(state, -1))


@pytest.mark.parametrize("rule_set", RULE_SETS)
@_SETTINGS
@given(data=st.data(), seed=seeds, play_seed=seeds)
def test_every_state_round_trips_through_the_codec_and_the_default_action_is_legal(
    rule_set: RuleSet, data: st.DataObject, seed: int, play_seed: int
) -> None:
    """``decode_state(encode_state(s)) == s`` through the rule set and through the
    registry for every state reached; the default action (a turn deadline) is
    legal for the seat to act, and is a card, a FOLD or a REFUSE, never a bet."""
    options = data.draw(options_for(rule_set))
    rules = SPECS[rule_set].rules
    for step, referee in refereed(options, seed, play_seed):
        # The referee has followed the match to step.after.
        for state in (step.state, step.after):
            encoded = registry.encode_state(state)
            assert rules.decode_state(encoded) == state
            assert registry.decode_state(encoded) == state
        state = step.after
        default = registry.default_action(state)
        if state.to_act is None:
            assert default is None
            continue
        assert default in referee.legal(state, state.to_act)
        if isinstance(default, MakeCall):
            assert default.call in (Call.FOLD, Call.REFUSE)
            assert state.prompt != Prompt.TURN
        else:
            assert isinstance(default, PlayCard)
            assert state.prompt == Prompt.TURN
