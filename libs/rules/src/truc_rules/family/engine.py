"""The engine of the variants.md rule sets: V1 once, the differences read from
the state's :class:`~truc_rules.family.variant.Variant`.

Pure: no I/O, no clock, no global randomness (each deal is a function of the
game's seed and the hand number: :func:`_shuffled`). Every action is applied to a clone; a refused
action raises :class:`~truc_rules.errors.IllegalAction` and changes nothing.

Refusal precedence (scenarios.md, variants.md V6): ``GAME_OVER``;
``NOT_YOUR_TURN``; ``NOT_ALLOWED_NOW`` for a card while an answer is awaited;
``CARD_NOT_IN_HAND`` (another pack's card included); then ``NOT_ALLOWED_NOW``
for everything else (a card an instruction forbids, a call of another rule
set, a call out of its moment). Signals and directives may be sent at any
moment of a hand, so they are never refused as out of turn.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from truc_rules.actions import (
    CALL,
    MAX_MESSAGES,
    Action,
    Call,
    Directive,
    MakeCall,
    PlayCard,
    SendDirective,
    SendSignal,
    Signal,
    calls_of,
    plays_of,
)
from truc_rules.cards import Card, Rank
from truc_rules.errors import IllegalAction, InvalidSetup, Reason
from truc_rules.events import (
    Called,
    CardPlayed,
    CardsDealt,
    CreditReason,
    DealerChosen,
    DealsExhausted,
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
from truc_rules.tricks import NOBODY, UNDECIDED, hand_decision

from .state import Deal, FamilyState, Pending, Phase, Prompt, Trick
from .variant import FamilyOptions, Ladder, MessageRoles, PartnerTie, Variant

__all__ = [
    "HAND_SIZE",
    "Transition",
    "apply_action",
    "is_terminal",
    "legal_actions",
    "lowest_cards",
    "new_game",
    "to_act",
]

HAND_SIZE: Final = 3
TRICKS_PER_HAND: Final = 3
_HAND_KEY: Final = struct.Struct("<4sQI")
_DEALER_KEY: Final = struct.Struct("<4sQ")
NO_CUT: Final = -1
"""HandStarted.cutter in these rule sets: nobody cuts."""

_RANK: Final = tuple(c.rank for c in Card)
"""Each card's rank, by card number (a look-up instead of a property)."""
_ACCEPT_OR_FOLD: Final = (CALL[Call.ACCEPT], CALL[Call.FOLD])
_MON_RESTE_ANSWERS: Final = (CALL[Call.FOLD], CALL[Call.MON_RESTE])
_REDEAL_ANSWERS: Final = (CALL[Call.ACCEPT], CALL[Call.REFUSE])
_NO_MESSAGES: Final[tuple[SendSignal | SendDirective, ...]] = ()


@dataclass(frozen=True, slots=True)
class Transition:
    """The state after an action, and the events the action caused, in order."""

    state: FamilyState
    events: tuple[Event, ...]


# --------------------------------------------------------------------------- queries


def to_act(state: FamilyState) -> int | None:
    """The one seat expected to act, or None (match over, or no deal left)."""
    return state.to_act


def is_terminal(state: FamilyState) -> bool:
    """True once the match is over, or a fixed-deal game has no deal left."""
    return state.phase in (Phase.MATCH_OVER, Phase.NO_DEAL)


def strengths(state: FamilyState) -> tuple[int, ...]:
    """Each card's strength in this game's trick order (higher wins)."""
    return state.variant.strengths[state.options.trick_order]


def lowest_cards(state: FamilyState, seat: int) -> tuple[Card, ...]:
    """The seat's lowest-ranked cards in the trick order (V4.5, V6)."""
    power = strengths(state)
    hand = state.hands[seat]
    low = min(power[c] for c in hand)
    return tuple(c for c in hand if power[c] == low)


def legal_actions(state: FamilyState, seat: int) -> tuple[Action, ...]:
    """Every action ``seat`` may take now: the seat to act gets its cards and
    calls; any seat with a role on the team channel may also send its signals
    and directives at any moment of the hand."""
    if state.phase != Phase.PLAY or not 0 <= seat < state.seats:
        return ()
    messages = _messages(state, seat)
    if seat != state.to_act:
        return messages
    prompt = state.prompt
    if prompt == Prompt.TURN:
        return plays_of(_playable(state, seat)) + calls_of(_turn_calls(state, seat)) + messages
    if prompt == Prompt.RAISE_ANSWER:
        return _ACCEPT_OR_FOLD + messages
    if prompt == Prompt.MON_RESTE_ANSWER:
        return _MON_RESTE_ANSWERS + messages
    return _REDEAL_ANSWERS + messages


def _playable(state: FamilyState, seat: int) -> tuple[Card, ...]:
    """The cards ``seat`` may play: its hand, as a binding instruction allows."""
    hand = state.hands[seat]
    instruction = state.instructions[seat]
    if instruction is None:
        return hand
    if instruction == Directive.PLAY_SEVEN:
        sevens = tuple([c for c in hand if _RANK[c] == Rank.SEVEN])
        return sevens or hand
    return lowest_cards(state, seat)


def _turn_calls(state: FamilyState, seat: int) -> tuple[Call, ...]:
    """The calls open to ``seat`` at its own turn."""
    variant = state.variant
    calls: list[Call] = []
    options = state.options
    dealer = state.dealer
    eldest = (dealer + 1) % options.seats
    if state.decided == UNDECIDED and not state.mon_reste and not state.raised:
        stake = state.stake
        target = options.target_score
        if stake < target:
            if variant.ladder != Ladder.TRUC_RETRUC:
                calls.append(Call.RAISE)
            elif stake == 1:
                calls.append(Call.TRUC)
            elif stake == 2:
                calls.append(Call.RETRUC)
            if variant.mon_reste and target - state.scores[seat % 2] > stake:
                calls.append(Call.MON_RESTE)
        if (
            variant.redeal
            and seat == eldest
            and not state.redeal_proposed
            and not state.tricks
            and not state.trick_cards
            and stake == 1
        ):
            calls.append(Call.PROPOSE_REDEAL)
    if state.decided == UNDECIDED and (not variant.governors or seat in (dealer, eldest)):
        calls.append(Call.FOLD)
    return tuple(calls)


def _messages(state: FamilyState, seat: int) -> tuple[SendSignal | SendDirective, ...]:
    variant = state.variant
    seats = state.options.seats
    roles = variant.roles[seats]
    if roles is MessageRoles.NONE or len(state.signals) >= MAX_MESSAGES:
        return _NO_MESSAGES
    if roles is MessageRoles.ANYONE:
        return variant.true_signals(state.hands[seat]) + variant.directive_actions
    dealer = state.dealer
    if seat == dealer or seat == (dealer + 1) % seats:  # a governor instructs
        return variant.directive_actions
    return variant.true_signals(state.hands[seat])  # its partner signals


# --------------------------------------------------------------------------- setup


def new_game(
    variant: Variant,
    options: FamilyOptions | None = None,
    *,
    seed: int | None = None,
    deals: Sequence[Deal] | None = None,
    dealer: int | None = None,
    scores: tuple[int, int] = (0, 0),
    manches: tuple[int, int] = (0, 0),
) -> Transition:
    """Start a match of ``variant``.

    Give exactly one of ``seed`` (every deal, and the first dealer unless
    ``dealer`` is given, come from it) or ``deals`` (fixed hands, one per seat,
    per hand; a redeal takes the next one; when they run out the game stops with
    nobody to act; the first dealer is ``dealer``, seat 0 when absent).
    ``scores`` and ``manches`` set a start position (scenarios).
    """
    options = options or variant.options()
    variant.check(options)
    seats = options.seats
    if (seed is None) == (deals is None):
        raise InvalidSetup("give exactly one of seed and deals")
    if seed is not None and not 0 <= seed < 2**63:
        raise InvalidSetup("seed must be in 0 .. 2**63 - 1")
    if dealer is not None and not 0 <= dealer < seats:
        raise InvalidSetup(f"dealer must be a seat 0-{seats - 1}, not {dealer!r}")
    fixed = tuple(_checked_deal(variant, seats, d) for d in deals) if deals is not None else ()
    target = options.target_score
    if len(scores) != 2 or not all(0 <= s < target for s in scores):
        raise InvalidSetup(f"scores must be two numbers 0-{target - 1}")
    goal = options.manches_to_win
    if len(manches) != 2 or not all(0 <= m < goal for m in manches):
        raise InvalidSetup(f"manches must be two numbers 0-{goal - 1}")
    if dealer is None:
        dealer = 0 if seed is None else first_dealer(seed, seats)
    empty: Deal = ((),) * seats
    state = FamilyState(
        variant=variant,
        options=options,
        seed=seed,
        deals=fixed,
        phase=Phase.PLAY,
        to_act=None,
        prompt=Prompt.TURN,
        scores=(scores[0], scores[1]),
        manches=(manches[0], manches[1]),
        history=(),
        hand_number=0,
        hands_played=0,
        dealer=dealer,
        dealt=empty,
        hands=empty,
        stock=(),
        tricks=(),
        leader=0,
        trick_cards=(),
        stake=1,
        stake_call=None,
        raised=False,
        pending=None,
        mon_reste=False,
        redeal_proposed=False,
        decided=UNDECIDED,
        signals=(),
        instructions=(None,) * seats,
    )
    events: list[Event] = [DealerChosen(-1, dealer)]
    _start_hand(state, events, rotate=False)
    return Transition(state, tuple(events))


def _checked_deal(variant: Variant, seats: int, deal: Deal) -> Deal:
    if len(deal) != seats or any(len(hand) != HAND_SIZE for hand in deal):
        raise InvalidSetup(f"a deal of {variant.rule_set} is {seats} hands of three cards")
    cards = [Card(c) for hand in deal for c in hand]
    if len(set(cards)) != len(cards):
        raise InvalidSetup("a deal holds a card twice")
    strange = [str(c) for c in cards if c not in variant.deck]
    if strange:
        raise InvalidSetup(f"not cards of the {variant.deck.name} pack: {', '.join(strange)}")
    return tuple(tuple(Card(c) for c in hand) for hand in deal)


def _start_hand(state: FamilyState, events: list[Event], *, rotate: bool) -> None:
    """V1.2: the next hand, dealt by the next dealer."""
    seats = state.seats
    if rotate:
        state.dealer = (state.dealer + 1) % seats
    state.tricks = ()
    state.trick_cards = ()
    state.stake = 1
    state.stake_call = None
    state.raised = False
    state.pending = None
    state.mon_reste = False
    state.redeal_proposed = False
    state.decided = UNDECIDED
    state.signals = ()
    state.instructions = (None,) * seats
    state.leader = state.eldest
    if state.seed is None and not state.deals:
        _no_deal(state, events)
        return
    state.hand_number += 1
    manche = state.manches[0] + state.manches[1] + 1
    events.append(
        HandStarted(state.hand_number, state.dealer, state.eldest, NO_CUT, manche, state.belle)
    )
    if state.seed is None:
        _deal(state, events, state.deals[0], ())
        state.deals = state.deals[1:]
    else:
        _deal(state, events, *_deal_from(state, _shuffled(state)))


def _no_deal(state: FamilyState, events: list[Event]) -> None:
    state.phase = Phase.NO_DEAL
    state.to_act = None
    state.prompt = Prompt.TURN
    state.pending = None
    events.append(DealsExhausted())


def _deal_from(state: FamilyState, pack: Sequence[Card]) -> tuple[Deal, tuple[Card, ...]]:
    """V1.2: one card at a time round the table from eldest, from the top of
    ``pack``; the rest of the pack, in its order, is the stock."""
    seats = state.seats
    eldest = state.eldest
    hands: list[list[Card]] = [[] for _ in range(seats)]
    for i in range(seats * HAND_SIZE):
        hands[(eldest + i) % seats].append(pack[i])
    return tuple(tuple(h) for h in hands), tuple(pack[seats * HAND_SIZE :])


def _shuffled(state: FamilyState) -> list[Card]:
    """The pack shuffled for the current hand of a seeded game, as far as a hand
    can reach into it: the cards of the deal and, where a redeal may follow, of
    the redeal (a partial Fisher-Yates shuffle); the cards no hand can reach
    stay in pack order (their order changes nothing).

    The randomness is SHAKE-128 of (seed, hand number): 32 bits per position, so
    the choice of each card is uniform to within 2**-27, and a game replays
    exactly from its seed.
    """
    cards = list(state.variant.deck.cards)
    size = len(cards)
    reach = min(size, state.seats * HAND_SIZE * (2 if state.variant.redeal else 1))
    stream = hashlib.shake_128(_HAND_KEY.pack(b"hand", state.seed, state.hand_number)).digest(
        4 * reach
    )
    for i, key in enumerate(struct.unpack(f"<{reach}I", stream)):
        j = i + key % (size - i)
        cards[i], cards[j] = cards[j], cards[i]
    return cards


def first_dealer(seed: int, seats: int) -> int:
    """The first dealer of a seeded game (V1.2: chosen from the seed)."""
    stream = hashlib.shake_128(_DEALER_KEY.pack(b"deal", seed)).digest(8)
    return int.from_bytes(stream, "little") % seats


def _deal(state: FamilyState, events: list[Event], deal: Deal, rest: tuple[Card, ...]) -> None:
    for seat, hand in enumerate(deal):
        events.append(CardsDealt(seat, hand, None, None))
    state.phase = Phase.PLAY
    state.dealt = deal
    state.hands = deal
    state.stock = rest
    state.prompt = Prompt.TURN
    state.to_act = state.eldest


# --------------------------------------------------------------------------- apply


def apply_action(state: FamilyState, seat: int, action: Action) -> Transition:
    """Apply ``action`` for ``seat``; raise IllegalAction (state unchanged) if refused."""
    if state.phase == Phase.MATCH_OVER:
        raise IllegalAction(Reason.GAME_OVER, "the match is over")
    if isinstance(action, SendSignal | SendDirective):
        return _apply_message(state, seat, action)
    if state.to_act is None or seat != state.to_act:
        who = "no seat is" if state.to_act is None else f"seat {state.to_act} is"
        raise IllegalAction(Reason.NOT_YOUR_TURN, f"{who} expected to act")
    work = state.clone()
    events: list[Event] = []
    if isinstance(action, PlayCard):
        _play(work, seat, action.card, events)
    elif isinstance(action, MakeCall):
        _call(work, seat, action.call, events)
    else:
        raise IllegalAction(
            Reason.NOT_ALLOWED_NOW, f"{action} is not an action of {state.variant.rule_set}"
        )
    return Transition(work, tuple(events))


def _apply_message(state: FamilyState, seat: int, action: SendSignal | SendDirective) -> Transition:
    """V4.5, V5.4: the team channel, at any moment of a hand."""
    if state.phase == Phase.NO_DEAL:
        raise IllegalAction(Reason.NOT_YOUR_TURN, "no seat is expected to act")
    if not 0 <= seat < state.seats:
        raise IllegalAction(Reason.NOT_ALLOWED_NOW, f"there is no seat {seat}")
    if len(state.signals) >= MAX_MESSAGES:
        raise IllegalAction(
            Reason.NOT_ALLOWED_NOW, f"a hand carries at most {MAX_MESSAGES} team messages"
        )
    if action not in _messages(state, seat):
        raise IllegalAction(Reason.NOT_ALLOWED_NOW, _message_refusal(state, seat, action))
    work = state.clone()
    event: Event
    if isinstance(action, SendSignal):
        event = SignalSent(seat, action.signal)
        message: Signal | Directive = action.signal
    else:
        event = DirectiveSent(seat, action.directive)
        message = action.directive
        if state.variant.binding:
            instructions = list(state.instructions)
            instructions[(seat + 2) % state.seats] = action.directive
            work.instructions = tuple(instructions)
    work.signals = (*state.signals, (seat, message))
    return Transition(work, (event,))


def _message_refusal(state: FamilyState, seat: int, action: SendSignal | SendDirective) -> str:
    variant = state.variant
    roles = variant.message_roles(state.seats)
    if roles == MessageRoles.NONE:
        return f"{variant.rule_set} with {state.seats} seats has no signals or directives"
    if isinstance(action, SendSignal):
        if action.signal not in variant.signals:
            return f"{action.signal} is not a signal of {variant.rule_set}"
        if roles == MessageRoles.GOVERNOR_PARTNER and seat in state.governors:
            return "a governor does not signal; its partner does"
        return f"a signal must be true: seat {seat} holds no such card"
    if action.directive not in variant.directives:
        return f"{action.directive} is not a directive of {variant.rule_set}"
    return "only a governor instructs its partner"


def _play(state: FamilyState, seat: int, card: Card, events: list[Event]) -> None:
    if state.prompt != Prompt.TURN:
        raise IllegalAction(Reason.NOT_ALLOWED_NOW, f"the {state.prompt.name.lower()} comes first")
    hand = state.hands[seat]
    if card not in hand:
        raise IllegalAction(Reason.CARD_NOT_IN_HAND, f"seat {seat} does not hold {card}")
    if card not in _playable(state, seat):
        instruction = state.instructions[seat]
        raise IllegalAction(
            Reason.NOT_ALLOWED_NOW, f"the instruction {instruction} forbids {card} (V4.5)"
        )
    hands = list(state.hands)
    hands[seat] = tuple([c for c in hand if c != card])
    state.hands = tuple(hands)
    if state.instructions[seat] is not None:
        instructions = list(state.instructions)
        instructions[seat] = None
        state.instructions = tuple(instructions)
    trick = (*state.trick_cards, card)
    state.trick_cards = trick
    state.raised = False
    events.append(CardPlayed(seat, card, len(state.tricks) + 1))
    seats = state.options.seats
    if len(trick) == seats:
        _complete_trick(state, events)
    else:
        state.to_act = (state.leader + len(trick)) % seats


def _complete_trick(state: FamilyState, events: list[Event]) -> None:
    """V1.3, V1.4, V4.4, V6: the highest rank wins; a tie across sides spoils."""
    power = strengths(state)
    seats = state.options.seats
    cards = state.trick_cards
    leader = state.leader
    best = max(map(power.__getitem__, cards))
    top = [(leader + i) % seats for i, c in enumerate(cards) if power[c] == best]
    winner_team: int | None = None
    winning_seat: int | None = None
    if len({s % 2 for s in top}) == 1:
        if len(top) == 1 or state.variant.partner_tie == PartnerTie.FIRST_PLAYED:
            winner_team, winning_seat = top[0] % 2, top[0]
        elif leader in top:
            winner_team, winning_seat = leader % 2, leader
    tricks = (*state.tricks, Trick(leader, cards, winner_team, winning_seat))
    state.tricks = tricks
    state.trick_cards = ()
    number = len(tricks)
    if state.decided == UNDECIDED and number > 1:
        state.decided = hand_decision([t.winner_team for t in tricks])
    over = number == TRICKS_PER_HAND or (
        state.decided != UNDECIDED and not state.options.play_out_all_tricks
    )
    next_leader = None if over else (winning_seat if winning_seat is not None else leader)
    events.append(TrickCompleted(number, winner_team, winning_seat, next_leader))
    if not over:
        assert next_leader is not None
        state.leader = next_leader
        state.prompt = Prompt.TURN
        state.to_act = next_leader
        return
    if state.decided == NOBODY:
        _end_hand(state, events, None, "all_pardes")
        return
    winner = state.decided
    if _credit(state, events, winner, state.stake, CreditReason.HAND):
        _end_hand(state, events, winner, "tricks")


def _call(state: FamilyState, seat: int, call: Call, events: list[Event]) -> None:
    prompt = state.prompt
    if prompt == Prompt.TURN:
        if call not in _turn_calls(state, seat):
            raise IllegalAction(Reason.NOT_ALLOWED_NOW, _call_refusal(state, seat, call))
        events.append(Called(seat, call))
        if call == Call.FOLD:
            _concede(state, events, seat)
        elif call == Call.PROPOSE_REDEAL:
            state.redeal_proposed = True
            state.pending = Pending(call, seat, state.dealer, state.stake)
            state.prompt = Prompt.REDEAL_ANSWER
            state.to_act = state.dealer
        else:
            state.raised = True
            if call == Call.MON_RESTE:
                need = state.options.target_score - state.scores[seat % 2]
                state.pending = Pending(call, seat, _answerer(state, seat), need)
                state.prompt = Prompt.MON_RESTE_ANSWER
            else:
                state.pending = Pending(call, seat, _answerer(state, seat), _raised(state))
                state.prompt = Prompt.RAISE_ANSWER
            state.to_act = state.pending.answerer
        return
    answers = {
        Prompt.RAISE_ANSWER: (Call.ACCEPT, Call.FOLD),
        Prompt.MON_RESTE_ANSWER: (Call.FOLD, Call.MON_RESTE),
        Prompt.REDEAL_ANSWER: (Call.ACCEPT, Call.REFUSE),
    }[prompt]
    pending = state.pending
    assert pending is not None
    if call not in answers:
        raise IllegalAction(
            Reason.NOT_ALLOWED_NOW,
            f"{pending.call} is answered {' or '.join(answers)}, not {call}",
        )
    events.append(Called(seat, call))
    state.pending = None
    state.prompt = Prompt.TURN
    if call == Call.FOLD:
        # V1.6, V2.4: the caller's side scores the stake before the call.
        team = pending.caller % 2
        if _credit(state, events, team, state.stake, CreditReason.FOLD):
            _end_hand(state, events, team, "fold")
    elif pending.call == Call.PROPOSE_REDEAL:
        state.to_act = state.eldest
        if call == Call.ACCEPT:
            _redeal(state, events)
    elif call == Call.MON_RESTE:
        state.mon_reste = True
        state.stake_call = Call.MON_RESTE
        events.append(StakeRaised(Call.MON_RESTE, 0))
        state.to_act = state.turn
    else:
        state.stake = pending.stake
        state.stake_call = pending.call
        events.append(StakeRaised(pending.call, pending.stake))
        state.to_act = state.turn


def _call_refusal(state: FamilyState, seat: int, call: Call) -> str:
    variant = state.variant
    if call not in variant.calls:
        return f"{call} is not a call of {variant.rule_set}"
    if call in (Call.ACCEPT, Call.REFUSE):
        return f"there is nothing to answer {call}"
    if state.decided != UNDECIDED:
        return "the hand is decided"
    if call == Call.FOLD:
        return "only a governor concedes for its side (V4.2)"
    if call == Call.PROPOSE_REDEAL:
        return "only eldest proposes a redeal, once, at its first turn (V2.5)"
    if state.mon_reste:
        return "no raise follows a MON_RESTE answered MON_RESTE (V2.4)"
    if state.raised:
        return "one raise per turn (V1.7)"
    if state.stake >= state.options.target_score:
        return "the stake has reached the target (V1.7)"
    if call == Call.MON_RESTE:
        return "MON_RESTE needs the caller's need above the stake (V2.4)"
    return f"{call} is not open at stake {state.stake} (V5.3)"


def _raised(state: FamilyState) -> int:
    """The stake a raise proposes (V2.3, V3, V5.3)."""
    return state.variant.ladder.raised(state.stake)


def _answerer(state: FamilyState, caller: int) -> int:
    """Who answers ``caller``'s raise: the opposing governor (V4.2), else the
    caller's next seat, the first opponent in the order of play (V5.3)."""
    if state.variant.governors:
        return state.eldest if caller % 2 == state.dealer % 2 else state.dealer
    return (caller + 1) % state.seats


def _concede(state: FamilyState, events: list[Event], seat: int) -> None:
    """V1.6, V6: the other side scores the stake (the game after MON_RESTE)."""
    team = 1 - seat % 2
    if _credit(state, events, team, state.stake, CreditReason.FOLD):
        _end_hand(state, events, team, "fold")


def _redeal(state: FamilyState, events: list[Event]) -> None:
    """V2.5: both hands set aside; three new cards each from the rest of the pack
    (from fixed deals: the next entry). Instructions still bind (V6)."""
    if state.seed is None:
        if not state.deals:
            _no_deal(state, events)
            return
        deal = state.deals[0]
        state.deals = state.deals[1:]
        _deal(state, events, deal, ())
    else:
        _deal(state, events, *_deal_from(state, state.stock))


def _credit(
    state: FamilyState, events: list[Event], team: int, points: int, reason: CreditReason
) -> bool:
    """Credit the hand's result; False if it won the game (the game is then settled)."""
    target = state.options.target_score
    scores = list(state.scores)
    before = scores[team]
    scores[team] = target if state.mon_reste else min(target, before + points)
    state.scores = (scores[0], scores[1])
    events.append(PointsCredited(team, scores[team] - before, reason, state.scores))
    if scores[team] < target:
        return True
    _end_game(state, events, team)
    return False


def _end_hand(state: FamilyState, events: list[Event], winner: int | None, how: str) -> None:
    state.hands_played += 1
    state.pending = None
    events.append(HandEnded(state.hand_number, winner, how))
    _start_hand(state, events, rotate=True)


def _end_game(state: FamilyState, events: list[Event], team: int) -> None:
    """V1.5: the game is won; maybe the match."""
    final = state.scores
    state.history = (*state.history, (team, final[0], final[1]))
    manches = list(state.manches)
    manches[team] += 1
    state.manches = (manches[0], manches[1])
    state.scores = (0, 0)
    state.hands_played += 1
    state.pending = None
    events.append(MancheEnded(team, final, state.manches))
    events.append(HandEnded(state.hand_number, team, "manche_over"))
    if manches[team] >= state.options.manches_to_win:
        state.phase = Phase.MATCH_OVER
        state.to_act = None
        state.prompt = Prompt.TURN
        events.append(MatchEnded(team, state.manches))
        return
    _start_hand(state, events, rotate=True)
