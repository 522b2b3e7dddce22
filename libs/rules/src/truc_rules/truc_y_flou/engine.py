"""The rules engine: a new game, who acts, what is legal, and applying an action.

The API follows OpenSpiel's game/state split, as pure functions over
:class:`~truc_rules.truc_y_flou.state.GameState`:

* :func:`new_game` — a match from rule options and a seed (or fixed deals);
* :func:`to_act` — the one seat expected to act (§8);
* :func:`legal_actions` — everything a seat may do now, every legal call included;
* :func:`apply_action` — a :class:`Transition`: the new state and the events it
  caused, or :class:`~truc_rules.errors.IllegalAction` with a reason and
  the old state untouched.

No I/O, no clock, no global randomness: dealing uses ``random.Random`` seeded
from the game's seed and the hand number, so every game replays exactly.
Section numbers (§) refer to shared/spec/rules.md.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Final

from truc_rules.actions import MAX_MESSAGES, calls_of, plays_of
from truc_rules.cards import DECK, SPANISH, Card
from truc_rules.errors import IllegalAction, InvalidSetup, Reason
from truc_rules.tricks import hand_decision

from .actions import (
    CHOOSE_DEALER,
    DIRECTIVE,
    DIRECTIVES,
    EMBIT_OPENINGS,
    SIGNAL,
    TRUC_LADDER,
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
from .constants import CAPTAINS, HAND_SIZE, NUM_SEATS, TRICKS_PER_HAND
from .declarations import flor, hand_values, has_flor, showdown_key
from .events import (
    Called,
    CardPlayed,
    CardsDealt,
    CreditReason,
    DealerChosen,
    DealsExhausted,
    DeckCut,
    DeclarationSettled,
    DirectiveSent,
    DrawCard,
    EmbitVoided,
    Event,
    FlorShowdown,
    HandEnded,
    HandStarted,
    MancheEnded,
    MatchEnded,
    PointsCredited,
    Shown,
    SignalSent,
    StakeRaised,
    TrickCompleted,
)
from .options import CutMode, Responder, RuleOptions
from .ranking import BASTO, ESPASA, trick_class
from .state import (
    PARTIDO,
    STAKES,
    UNDECIDED,
    Credit,
    Deal,
    EmbitContest,
    FlorExchange,
    GameState,
    Phase,
    Prompt,
    Trick,
    TrucCall,
)

__all__ = [
    "Transition",
    "apply_action",
    "is_terminal",
    "legal_actions",
    "new_game",
    "to_act",
]


@dataclass(frozen=True, slots=True)
class Transition:
    """The state after an action, and the events the action caused, in order."""

    state: GameState
    events: tuple[Event, ...]


_EMBIDE_POLL: Final = (
    Call.PASS,
    Call.CANTAR,
    Call.U_AOUTE,
    Call.DUS_DE_MES,
    Call.DETZ_DE_MES,
    Call.RESTOU,
)
_CANTAR_POLL: Final = (Call.PASS, Call.CANTAR)
_ACCEPT_OR_FOLD: Final = (Call.ACCEPT, Call.FOLD)
_DECLARER_ANSWERS: Final = (Call.FOLD, Call.ALIMIDOU_CANTAR, Call.ALIBARESTOU_CON_FLOR)
_RAISE_POINTS: Final = {Call.U_AOUTE: 1, Call.DUS_DE_MES: 2, Call.DETZ_DE_MES: 10}
_SIGNAL_OF: Final = {
    Card.SW_1: Signal.ESPASA,
    Card.CL_1: Signal.BASTO,
    Card.SW_7: Signal.MANILLA_SW,
    Card.CO_7: Signal.MANILLA_CO,
    **{c: Signal.TRES for c in DECK if c % 10 == 2},
    **{c: Signal.DUS for c in DECK if c % 10 == 1},
}
_CUTS: Final = tuple(CutDeck(position) for position in range(1, 40))
_DIRECTIVES: Final = tuple(DIRECTIVE[d] for d in DIRECTIVES)


# --------------------------------------------------------------------------- queries


def to_act(state: GameState) -> int | None:
    """The one seat expected to act, or None (match over, or no deal left)."""
    return state.to_act


def is_terminal(state: GameState) -> bool:
    """True once the match is over, or a fixed-deal game has no deal left."""
    return state.phase in (Phase.MATCH_OVER, Phase.NO_DEAL)


def legal_actions(state: GameState, seat: int) -> tuple[Action, ...]:
    """Every action ``seat`` may take now.

    The seat expected to act gets its cards and calls; any seat holding a hand
    may also send its true signals (and a captain its directives) at any time
    (§7.1), so those appear for every seat during a hand.
    """
    phase = state.phase
    if phase == Phase.PLAY:
        messages = _messages(state, seat)
        if seat != state.to_act:
            return messages
        calls = calls_of(_allowed_calls(state, seat, has_flor(state.dealt[seat])))
        if state.prompt == Prompt.TURN:
            return plays_of(state.hands[seat]) + calls + messages
        return calls + messages
    if seat != state.to_act:
        return ()
    if phase == Phase.DRAW:
        return CHOOSE_DEALER
    if phase == Phase.CUT:
        return _CUTS
    return ()


def _messages(state: GameState, seat: int) -> tuple[SendSignal | SendDirective, ...]:
    if not 0 <= seat < NUM_SEATS or len(state.signals) >= MAX_MESSAGES:
        return ()
    signals = _true_signals(state.hands[seat])
    if seat in CAPTAINS:
        return signals + _DIRECTIVES
    return signals


@functools.lru_cache(maxsize=4096)
def _true_signals(hand: tuple[Card, ...]) -> tuple[SendSignal, ...]:
    """The signals §7.1 lets a hand send (hands repeat: a small, bounded cache)."""
    return tuple(dict.fromkeys(SIGNAL[_SIGNAL_OF[c]] for c in hand if c in _SIGNAL_OF))


def _allowed_calls(state: GameState, seat: int, holds_flor: bool) -> tuple[Call, ...]:
    """The calls open to ``seat`` (assumed to be ``to_act`` during a hand).

    ``holds_flor`` is passed in so that a refusal can tell NO_FLOR (the call
    would be open to a flor holder) from NOT_ALLOWED_NOW.
    """
    prompt = state.prompt
    if prompt == Prompt.TURN:
        calls: list[Call] = []
        if not state.tricks and not state.declared >> seat & 1 and not state.truc_called:
            if state.embit is None and not state.flors:
                calls.extend(EMBIT_OPENINGS)
            if holds_flor:
                calls.append(Call.FLOR)
        if (
            not state.truc_called
            and state.decided == UNDECIDED
            and state.stake_level < PARTIDO
            and state.last_raiser != seat % 2
        ):
            calls.append(TRUC_LADDER[state.stake_level])
        return tuple(calls)
    if prompt == Prompt.EMBIT_POLL:
        assert state.embit is not None
        return _EMBIDE_POLL if state.embit.call == Call.EMBIDE else _CANTAR_POLL
    if prompt == Prompt.FLOR_POLL:
        if holds_flor and not state.declared >> seat & 1:
            return (Call.PASS, Call.FLOR_TAMBIEN, Call.ALIMIDOU_CON_FLOR)
        return (Call.PASS, Call.ALIMIDOU_CON_FLOR)
    if prompt == Prompt.FLOR_DECLARER:
        return _DECLARER_ANSWERS
    if prompt == Prompt.TRUC_ANSWER:
        assert state.truc_call is not None
        if state.truc_call.rung < PARTIDO:
            return (*_ACCEPT_OR_FOLD, TRUC_LADDER[state.truc_call.rung])
        return _ACCEPT_OR_FOLD
    return _ACCEPT_OR_FOLD  # EMBIT_ANSWER, FLOR_CHALLENGER


# --------------------------------------------------------------------------- new game


def new_game(
    options: RuleOptions | None = None,
    *,
    seed: int | None = None,
    deals: Sequence[Deal] | None = None,
    dealer: int | None = None,
    draws: Sequence[tuple[Card, Card]] | None = None,
    scores: tuple[int, int] = (0, 0),
    manches: tuple[int, int] = (0, 0),
) -> Transition:
    """Start a match.

    Give exactly one of ``seed`` (every deal and the draw come from it) or
    ``deals`` (fixed hands, seat 0 to 5, one per hand; when they run out the
    game stops with nobody to act). Give ``dealer`` to skip the draw for first
    deal, or ``draws`` (team A's and B's captain's card per draw) to fix it;
    otherwise the draw comes from the seed. ``scores`` and ``manches`` set a
    start position (scenarios).
    """
    options = options or RuleOptions()
    if (seed is None) == (deals is None):
        raise InvalidSetup("give exactly one of seed and deals")
    if dealer is not None and draws is not None:
        raise InvalidSetup("give at most one of dealer and draws")
    if dealer is not None and not 0 <= dealer < NUM_SEATS:
        raise InvalidSetup(f"dealer must be a seat 0-5, not {dealer!r}")
    if seed is not None and not 0 <= seed < 2**63:
        raise InvalidSetup("seed must be in 0 .. 2**63 - 1")
    if deals is not None and draws is None and dealer is None:
        raise InvalidSetup("a game from fixed deals needs a dealer or draws")
    fixed = tuple(_checked_deal(d) for d in deals) if deals is not None else ()
    target = options.target_score
    if len(scores) != 2 or not all(0 <= s < target for s in scores):
        raise InvalidSetup(f"scores must be two numbers 0-{target - 1}")
    goal = options.manches_to_win
    if len(manches) != 2 or not all(0 <= m < goal for m in manches):
        raise InvalidSetup(f"manches must be two numbers 0-{goal - 1}")
    empty: Deal = ((),) * NUM_SEATS
    state = GameState(
        options=options,
        seed=seed,
        deals=fixed,
        draws=(),
        phase=Phase.DRAW,
        to_act=None,
        prompt=Prompt.TURN,
        scores=(scores[0], scores[1]),
        manches=(manches[0], manches[1]),
        history=(),
        hand_number=0,
        hands_played=0,
        dealer=dealer if dealer is not None else 0,
        dealt=empty,
        hands=empty,
        stock=(),
        tricks=(),
        leader=0,
        trick_cards=(),
        declared=0,
        truc_called=False,
        stake_level=0,
        last_raiser=-1,
        truc_call=None,
        embit=None,
        flors=(),
        decided=UNDECIDED,
        revealed=(),
        signals=(),
    )
    events: list[Event] = []
    if dealer is not None:
        events.append(DealerChosen(-1, dealer))
        _start_hand(state, events, rotate=False)
    else:
        _draw_for_deal(state, events, draws)
    return Transition(state, tuple(events))


def _checked_deal(deal: Deal) -> Deal:
    if len(deal) != NUM_SEATS or any(len(hand) != HAND_SIZE for hand in deal):
        raise InvalidSetup("a deal is six hands of three cards")
    cards = [Card(c) for hand in deal for c in hand]
    if len(set(cards)) != len(cards):
        raise InvalidSetup("a deal holds a card twice")
    _check_spanish(cards)
    return tuple(tuple(Card(c) for c in hand) for hand in deal)


def _check_spanish(cards: Iterable[Card]) -> None:
    strange = [str(c) for c in cards if c not in SPANISH]
    if strange:
        raise InvalidSetup(f"not cards of the Spanish pack: {', '.join(strange)}")


def _draw_for_deal(
    state: GameState, events: list[Event], draws: Sequence[tuple[Card, Card]] | None
) -> None:
    """§2.4: the captains draw; the lower card in trick order chooses the dealer."""
    classes = trick_class(state.options.perique_trick_rank)
    if draws is None:
        assert state.seed is not None
        rng = random.Random(f"truc:draw:{state.seed}")
        pairs: list[tuple[Card, Card]] = []
        while not pairs or classes[pairs[-1][0]] == classes[pairs[-1][1]]:
            a, b = rng.sample(DECK, 2)
            pairs.append((a, b))
    else:
        pairs = [(Card(a), Card(b)) for a, b in draws]
        if not pairs:
            raise InvalidSetup("draws is empty")
        _check_spanish(c for pair in pairs for c in pair)
        for i, (a, b) in enumerate(pairs):
            if a == b:
                raise InvalidSetup("a draw holds one card twice")
            tied = classes[a] == classes[b]
            if tied != (i < len(pairs) - 1):
                raise InvalidSetup("every draw but the last must be a tie, and the last not")
    for a, b in pairs:
        events.append(DrawCard(CAPTAINS[0], a))
        events.append(DrawCard(CAPTAINS[1], b))
    a, b = pairs[-1]
    chooser_team = 0 if classes[a] > classes[b] else 1
    state.draws = tuple(pairs)
    state.phase = Phase.DRAW
    state.to_act = CAPTAINS[chooser_team]


def _start_hand(
    state: GameState, events: list[Event], *, rotate: bool, cut: int | None = None
) -> None:
    """Deal the next hand (§2.5); in cut=cutter mode, first ask the cutter."""
    if rotate:
        state.dealer = (state.dealer + 1) % NUM_SEATS
    if state.seed is None and not state.deals:
        state.phase = Phase.NO_DEAL
        state.to_act = None
        state.prompt = Prompt.TURN
        events.append(DealsExhausted())
        return
    state.hand_number += 1
    dealer = state.dealer
    cutter = (dealer - 1) % NUM_SEATS
    manche = state.manches[0] + state.manches[1] + 1
    events.append(
        HandStarted(state.hand_number, dealer, (dealer + 1) % 6, cutter, manche, state.belle)
    )
    if state.seed is not None and state.options.cut == CutMode.CUTTER:
        state.phase = Phase.CUT
        state.to_act = cutter
        state.prompt = Prompt.TURN
        return
    _deal(state, events, cut)


def _deal(state: GameState, events: list[Event], cut: int | None) -> None:
    eldest = (state.dealer + 1) % NUM_SEATS
    if state.seed is None:
        deal = state.deals[0]
        state.deals = state.deals[1:]
        dealt_cards = {c for hand in deal for c in hand}
        state.stock = tuple(c for c in DECK if c not in dealt_cards)
    else:
        # The hand number is below 2**20 in any real match; the pair seeds a private Random.
        rng = random.Random((state.seed << 20) | state.hand_number)
        deck = list(DECK)
        rng.shuffle(deck)
        position = rng.randrange(1, 40) if cut is None else cut
        deck = deck[position:] + deck[:position]
        events.append(DeckCut((state.dealer - 1) % NUM_SEATS, position))
        # One card at a time round the table, starting with eldest (§2.5).
        hands: list[list[Card]] = [[] for _ in range(NUM_SEATS)]
        for i in range(NUM_SEATS * HAND_SIZE):
            hands[(eldest + i) % NUM_SEATS].append(deck[i])
        deal = tuple(tuple(hand) for hand in hands)
        state.stock = tuple(sorted(deck[NUM_SEATS * HAND_SIZE :]))
    ace_value = state.options.ace_value
    for seat, hand in enumerate(deal):
        events.append(CardsDealt(seat, hand, *hand_values(hand, ace_value)))
    state.phase = Phase.PLAY
    state.dealt = deal
    state.hands = deal
    state.tricks = ()
    state.leader = eldest
    state.trick_cards = ()
    state.declared = 0
    state.truc_called = False
    state.stake_level = 0
    state.last_raiser = -1
    state.truc_call = None
    state.embit = None
    state.flors = ()
    state.decided = UNDECIDED
    state.revealed = ()
    state.signals = ()
    state.prompt = Prompt.TURN
    state.to_act = eldest


# --------------------------------------------------------------------------- apply


def apply_action(state: GameState, seat: int, action: Action) -> Transition:
    """Apply ``action`` for ``seat``; raise IllegalAction (state unchanged) if refused."""
    if state.phase == Phase.MATCH_OVER:
        raise IllegalAction(Reason.GAME_OVER, "the match is over")
    kind = type(action)
    if kind is SendSignal or kind is SendDirective:
        return _apply_message(state, seat, action)
    if seat != state.to_act:
        if state.to_act is None:
            raise IllegalAction(Reason.NOT_YOUR_TURN, "no seat is expected to act")
        raise IllegalAction(Reason.NOT_YOUR_TURN, f"seat {state.to_act} is expected to act")
    work = state.clone()
    events: list[Event] = []
    if kind is PlayCard:
        assert isinstance(action, PlayCard)
        _play(work, seat, action.card, events)
    elif kind is MakeCall:
        assert isinstance(action, MakeCall)
        _call(work, seat, action.call, events)
    elif kind is ChooseDealer:
        assert isinstance(action, ChooseDealer)
        if state.phase != Phase.DRAW:
            raise IllegalAction(Reason.NOT_ALLOWED_NOW, "the first dealer is already chosen")
        if not 0 <= action.dealer < NUM_SEATS:
            raise IllegalAction(Reason.NOT_ALLOWED_NOW, "the dealer must be a seat 0-5")
        work.dealer = action.dealer
        events.append(DealerChosen(seat, action.dealer))
        _start_hand(work, events, rotate=False)
    elif kind is CutDeck:
        assert isinstance(action, CutDeck)
        if state.phase != Phase.CUT:
            raise IllegalAction(Reason.NOT_ALLOWED_NOW, "there is no pack to cut now")
        if not 1 <= action.position <= 39:
            raise IllegalAction(Reason.NOT_ALLOWED_NOW, "a cut leaves 1-39 cards under")
        _deal(work, events, action.position)
    else:
        raise IllegalAction(Reason.NOT_ALLOWED_NOW, f"not an action: {action!r}")
    return Transition(work, tuple(events))


def _apply_message(state: GameState, seat: int, action: Action) -> Transition:
    """§7.1: signals and directives, team-private, at any time during a hand."""
    if state.phase == Phase.NO_DEAL:
        raise IllegalAction(Reason.NOT_YOUR_TURN, "no seat is expected to act")
    if state.phase != Phase.PLAY or not 0 <= seat < NUM_SEATS:
        raise IllegalAction(Reason.NOT_ALLOWED_NOW, "signals are sent during a hand")
    if len(state.signals) >= MAX_MESSAGES:
        raise IllegalAction(
            Reason.NOT_ALLOWED_NOW, f"a hand carries at most {MAX_MESSAGES} team messages"
        )
    event: Event
    message: Signal | Directive
    if isinstance(action, SendSignal):
        if not any(_SIGNAL_OF.get(c) == action.signal for c in state.hands[seat]):
            raise IllegalAction(
                Reason.NOT_ALLOWED_NOW, f"a signal must be true: seat {seat} holds no such card"
            )
        event = SignalSent(seat, action.signal)
        message = action.signal
    else:
        assert isinstance(action, SendDirective)
        if action.directive not in DIRECTIVES:
            raise IllegalAction(
                Reason.NOT_ALLOWED_NOW, f"{action.directive} is not a directive here"
            )
        if seat not in CAPTAINS:
            raise IllegalAction(Reason.NOT_ALLOWED_NOW, "only captains send directives")
        event = DirectiveSent(seat, action.directive)
        message = action.directive
    work = state.clone()
    work.signals = (*state.signals, (seat, message))
    return Transition(work, (event,))


def _back_to_turn(state: GameState) -> None:
    state.prompt = Prompt.TURN
    state.to_act = state.turn


def _play(state: GameState, seat: int, card: Card, events: list[Event]) -> None:
    if state.phase != Phase.PLAY or state.prompt != Prompt.TURN:
        raise IllegalAction(Reason.NOT_ALLOWED_NOW, "a call must be answered first")
    hand = state.hands[seat]
    if card not in hand:
        raise IllegalAction(Reason.CARD_NOT_IN_HAND, f"seat {seat} does not hold {card}")
    hands = list(state.hands)
    hands[seat] = tuple(c for c in hand if c != card)
    state.hands = tuple(hands)
    state.trick_cards = (*state.trick_cards, card)
    state.truc_called = False
    events.append(CardPlayed(seat, card, len(state.tricks) + 1))
    if len(state.trick_cards) == NUM_SEATS:
        _complete_trick(state, events)
    else:
        state.to_act = state.turn


def _complete_trick(state: GameState, events: list[Event]) -> None:
    """§3.3-§3.6, §3.8 and the crediting order of §5.10."""
    classes = trick_class(state.options.perique_trick_rank)
    cards = state.trick_cards
    leader = state.leader
    best = min(classes[c] for c in cards)
    top = [(leader + i) % NUM_SEATS for i, c in enumerate(cards) if classes[c] == best]
    teams = {s % 2 for s in top}
    winner_team = top[0] % 2 if len(teams) == 1 else None
    winning_seat = top[0] if winner_team is not None else None
    state.tricks = (*state.tricks, Trick(leader, cards, winner_team, winning_seat))
    state.trick_cards = ()
    number = len(state.tricks)
    if state.decided == UNDECIDED:
        state.decided = _hand_decision(state.tricks)
    over = number == TRICKS_PER_HAND or (
        state.decided != UNDECIDED and not state.options.play_out_all_tricks
    )
    next_leader = None if over else (winning_seat if winning_seat is not None else leader)
    events.append(TrickCompleted(number, winner_team, winning_seat, next_leader))

    credits: list[Iterable[tuple[Credit, CreditReason]]] = []
    if number == 1:
        credits.append(_declaration_credits(state, events))
    bonus = (2 if ESPASA in cards else 0) + (1 if BASTO in cards else 0)
    if bonus and winner_team is not None:
        credits.append([(Credit(winner_team, bonus), CreditReason.BONUS)])
    if not over:
        if not _settle(state, events, credits):
            assert next_leader is not None
            state.leader = next_leader
            state.prompt = Prompt.TURN
            state.to_act = next_leader
        return
    winner = state.decided if state.decided in (0, 1) else None
    credits.append(_tambien_credits(state, events))
    if winner is not None:
        stake = state.stake_level
        points = STAKES[stake] if stake < PARTIDO else 0
        credits.append([(Credit(winner, points, stake == PARTIDO), CreditReason.HAND)])
    how = "tricks" if winner is not None else "all_pardes"
    _end_hand(state, events, credits, winner, how)


def _hand_decision(tricks: tuple[Trick, ...]) -> int:
    """§3.5: the team that won the hand by these tricks, NOBODY, or UNDECIDED."""
    return hand_decision([t.winner_team for t in tricks])


def _end_hand(
    state: GameState,
    events: list[Event],
    credits: list[Iterable[tuple[Credit, CreditReason]]],
    winner: int | None,
    how: str,
) -> None:
    if _settle(state, events, credits):
        return
    state.hands_played += 1
    events.append(HandEnded(state.hand_number, winner, how))
    _start_hand(state, events, rotate=True)


def _settle(
    state: GameState,
    events: list[Event],
    credits: list[Iterable[tuple[Credit, CreditReason]]],
) -> bool:
    """Credit one at a time (§5.10); True if the manche ended (the rest is abandoned)."""
    target = state.options.target_score
    for group in credits:
        for credit, reason in group:
            team = credit.team
            scores = list(state.scores)
            before = scores[team]
            scores[team] = target if credit.wins_manche else min(target, before + credit.points)
            state.scores = (scores[0], scores[1])
            points = target - before if credit.wins_manche else credit.points
            events.append(PointsCredited(team, points, reason, state.scores))
            if scores[team] >= target:
                _end_manche(state, events, team)
                return True
    return False


def _end_manche(state: GameState, events: list[Event], team: int) -> None:
    """§2.2: the manche ends at once; the hand is abandoned; maybe the match ends."""
    final = state.scores
    state.history = (*state.history, (team, final[0], final[1]))
    manches = list(state.manches)
    manches[team] += 1
    state.manches = (manches[0], manches[1])
    state.scores = (0, 0)
    state.hands_played += 1
    events.append(MancheEnded(team, final, state.manches))
    decided = state.decided if state.decided in (0, 1) else None
    events.append(HandEnded(state.hand_number, decided, "manche_over"))
    state.truc_call = None
    if manches[team] >= state.options.manches_to_win:
        state.phase = Phase.MATCH_OVER
        state.to_act = None
        state.prompt = Prompt.TURN
        events.append(MatchEnded(team, state.manches))
        return
    _start_hand(state, events, rotate=True)


# --------------------------------------------------------------------------- calls


def _call(state: GameState, seat: int, call: Call, events: list[Event]) -> None:
    if state.phase != Phase.PLAY:
        raise IllegalAction(Reason.NOT_ALLOWED_NOW, f"{call} is not possible before the deal")
    if call not in _allowed_calls(state, seat, has_flor(state.dealt[seat])):
        if call in (Call.FLOR, Call.FLOR_TAMBIEN) and call in _allowed_calls(state, seat, True):
            raise IllegalAction(Reason.NO_FLOR, f"seat {seat} holds no flor")
        raise IllegalAction(Reason.NOT_ALLOWED_NOW, f"{call} is not allowed now")
    events.append(Called(seat, call))
    prompt = state.prompt
    if prompt == Prompt.TURN:
        if call in EMBIT_OPENINGS:
            state.declared |= 1 << seat
            rest = state.options.target_score - state.scores[seat % 2]
            state.embit = EmbitContest(call, seat, rest)
            state.prompt = Prompt.EMBIT_POLL
            state.to_act = (seat + 1) % NUM_SEATS
        elif call == Call.FLOR:
            state.declared |= 1 << seat
            state.flors = (*state.flors, FlorExchange(seat))
            state.prompt = Prompt.FLOR_POLL
            state.to_act = (seat + 1) % NUM_SEATS
        else:
            rung = state.stake_level + 1
            state.truc_called = True
            state.truc_call = TrucCall(rung, seat, CAPTAINS[1 - seat % 2])
            state.prompt = Prompt.TRUC_ANSWER
            state.to_act = state.truc_call.answerer
    elif prompt in (Prompt.EMBIT_POLL, Prompt.EMBIT_ANSWER):
        _embit_answer(state, seat, call, events)
    elif prompt == Prompt.TRUC_ANSWER:
        _truc_answer(state, seat, call, events)
    else:
        _flor_answer(state, seat, call, events)


def _embit_answer(state: GameState, seat: int, call: Call, events: list[Event]) -> None:
    contest = state.embit
    assert contest is not None
    caller_team = contest.opener % 2
    if state.prompt == Prompt.EMBIT_POLL and call == Call.PASS:
        polled = contest.polled + 1
        if polled < 3:
            state.embit = replace(contest, polled=polled)
            state.to_act = (contest.opener + 1 + 2 * polled) % NUM_SEATS
            return
        result = Credit(caller_team, 1)
        folded = contest.call == Call.RESTOU_Y_TROUCOU
        state.embit = replace(contest, polled=polled, result=result, credited=folded)
        events.append(DeclarationSettled("embit", caller_team, 1, False, ()))
        if folded:
            # §5.7: all passed, so the opponents folded: the hand ends at once.
            state.prompt = Prompt.TURN
            credits: list[Iterable[tuple[Credit, CreditReason]]] = [
                [(result, CreditReason.FOLD)],
                _declaration_credits(state, events),
                _tambien_credits(state, events),
            ]
            _end_hand(state, events, credits, caller_team, "fold")
            return
        _back_to_turn(state)
        return
    if state.prompt == Prompt.EMBIT_POLL and call == Call.CANTAR:
        winner, shown = _embit_showdown(state)
        if contest.call == Call.EMBIDE:
            result = Credit(winner, 2)
        elif contest.call == Call.MI_FALTA:
            # §5.5: the caller wins the manche, or the other side scores 1 + the caller's rest.
            result = (
                Credit(winner, 0, True)
                if winner == caller_team
                else Credit(winner, 1 + contest.rest)
            )
        else:
            result = Credit(winner, 0, True)
        state.embit = replace(contest, challenge=call, challenger=seat, result=result)
        events.append(DeclarationSettled("embit", winner, result.points, result.wins_manche, shown))
        _back_to_turn(state)
        return
    if state.prompt == Prompt.EMBIT_POLL:
        # A raise (§5.4); RESTOU raises by the rest of the team that calls it (§5.6).
        if call == Call.RESTOU:
            points = state.options.target_score - state.scores[seat % 2]
        else:
            points = _RAISE_POINTS[call]
        state.embit = replace(contest, challenge=call, challenger=seat, raise_points=points)
        state.prompt = Prompt.EMBIT_ANSWER
        if state.options.responder == Responder.CAPTAIN:
            state.to_act = CAPTAINS[caller_team]
        else:
            state.to_act = contest.opener
        return
    # EMBIT_ANSWER: ACCEPT or FOLD.
    if call == Call.FOLD:
        result = Credit(1 - caller_team, 2)
        shown = ()
    else:
        winner, shown = _embit_showdown(state)
        result = Credit(winner, 1 + contest.raise_points)
    state.embit = replace(contest, answer=call, result=result)
    events.append(DeclarationSettled("embit", result.team, result.points, False, shown))
    _back_to_turn(state)


def _priority(state: GameState, seat: int) -> int:
    """§2.6: lower wins ties; eldest 0, dealer 5."""
    return (seat - state.dealer - 1) % NUM_SEATS


def _embit_showdown(state: GameState) -> tuple[int, tuple[Shown, ...]]:
    """§4.5, §4.6: each team's best seat; ties by positional priority. Reveals the cards."""
    ace_value = state.options.ace_value
    best: list[tuple[tuple[int, int, int], Shown] | None] = [None, None]
    for seat in range(NUM_SEATS):
        has, value, cards = showdown_key(state.dealt[seat], ace_value)
        key = (has, value, -_priority(state, seat))
        current = best[seat % 2]
        if current is None or key > current[0]:
            best[seat % 2] = (key, Shown(seat, value, bool(has), cards))
    a, b = best
    assert a is not None and b is not None
    winner = 0 if a[0] > b[0] else 1
    shown = (a[1], b[1]) if winner == 0 else (b[1], a[1])
    _reveal(state, shown)
    return winner, shown


def _reveal(state: GameState, shown: tuple[Shown, ...]) -> None:
    cards = [c for s in shown for c in s.cards if c not in state.revealed]
    state.revealed = (*state.revealed, *dict.fromkeys(cards))


def _flor_comparison(state: GameState, exchange: FlorExchange) -> tuple[int, tuple[Shown, ...]]:
    """Compare the declarer's flor with the challenger's (§4.6, §5.8); ties by priority."""
    ace_value = state.options.ace_value
    entries = []
    for seat in (exchange.declarer, exchange.challenger):
        found = flor(state.dealt[seat], ace_value)
        if found is None:
            entries.append(((0, 0, -_priority(state, seat)), Shown(seat, 0, False, ())))
        else:
            entries.append(
                ((1, found[0], -_priority(state, seat)), Shown(seat, found[0], True, found[1]))
            )
    entries.sort(key=lambda e: e[0], reverse=True)
    shown = (entries[0][1], entries[1][1])
    _reveal(state, shown)
    return shown[0].seat % 2, shown


def _flor_answer(state: GameState, seat: int, call: Call, events: list[Event]) -> None:
    index = len(state.flors) - 1
    exchange = state.flors[index]
    declarer_team = exchange.declarer % 2
    result: Credit | None = None
    shown: tuple[Shown, ...] = ()
    prompt = state.prompt
    if prompt == Prompt.FLOR_POLL:
        if call == Call.PASS:
            polled = exchange.polled + 1
            if polled < 3:
                _replace_flor(state, index, replace(exchange, polled=polled))
                state.to_act = (exchange.declarer + 1 + 2 * polled) % NUM_SEATS
                return
            exchange = replace(exchange, polled=polled)
            result = Credit(declarer_team, 3)
        elif call == Call.FLOR_TAMBIEN:
            # That player's own flor declaration; compared at the end of the hand.
            state.declared |= 1 << seat
            _replace_flor(state, index, replace(exchange, challenge=call, challenger=seat))
            _back_to_turn(state)
            return
        else:  # ALIMIDOU_CON_FLOR: the declarer answers.
            _replace_flor(state, index, replace(exchange, challenge=call, challenger=seat))
            state.prompt = Prompt.FLOR_DECLARER
            state.to_act = exchange.declarer
            return
    elif prompt == Prompt.FLOR_DECLARER:
        if call == Call.FOLD:
            exchange = replace(exchange, declarer_answer=call)
            result = Credit(1 - declarer_team, 3)
        else:
            _replace_flor(state, index, replace(exchange, declarer_answer=call))
            state.prompt = Prompt.FLOR_CHALLENGER
            state.to_act = exchange.challenger
            return
    else:  # FLOR_CHALLENGER
        exchange = replace(exchange, challenger_answer=call)
        if call == Call.FOLD:
            result = Credit(declarer_team, 5)
        else:
            winner, shown = _flor_comparison(state, exchange)
            if exchange.declarer_answer == Call.ALIMIDOU_CANTAR:
                result = Credit(winner, 5)
            else:
                result = Credit(winner, 0, True)
    _replace_flor(state, index, replace(exchange, result=result))
    events.append(DeclarationSettled("flor", result.team, result.points, result.wins_manche, shown))
    _back_to_turn(state)


def _replace_flor(state: GameState, index: int, exchange: FlorExchange) -> None:
    flors = list(state.flors)
    flors[index] = exchange
    state.flors = tuple(flors)


def _declaration_credits(
    state: GameState, events: list[Event]
) -> Iterator[tuple[Credit, CreditReason]]:
    """End of trick 1 (or a fold): the embit result unless void, then each settled flor.

    A generator, so that nothing after a credit that ends the manche is looked at.
    """
    contest = state.embit
    if contest is not None and contest.result is not None and not contest.credited:
        state.embit = replace(contest, credited=True)
        if state.flors:
            events.append(EmbitVoided(contest.result.team, contest.result.points))
        else:
            yield contest.result, CreditReason.EMBIT
    for index, exchange in enumerate(state.flors):
        if exchange.result is not None and not exchange.credited:
            _replace_flor(state, index, replace(exchange, credited=True))
            yield exchange.result, CreditReason.FLOR


def _tambien_credits(
    state: GameState, events: list[Event]
) -> Iterator[tuple[Credit, CreditReason]]:
    """End of the hand: FLOR_TAMBIEN comparisons in declaration order (+3 to the better)."""
    for index, exchange in enumerate(state.flors):
        if exchange.challenge == Call.FLOR_TAMBIEN and not exchange.credited:
            winner, shown = _flor_comparison(state, exchange)
            result = Credit(winner, 3)
            _replace_flor(state, index, replace(exchange, result=result, credited=True))
            events.append(FlorShowdown(winner, shown))
            yield result, CreditReason.FLOR_TAMBIEN


def _truc_answer(state: GameState, seat: int, call: Call, events: list[Event]) -> None:
    pending = state.truc_call
    assert pending is not None
    if call == Call.ACCEPT:
        state.stake_level = pending.rung
        state.last_raiser = pending.caller % 2
        state.truc_call = None
        stake = STAKES[pending.rung] if pending.rung < PARTIDO else 0
        events.append(StakeRaised(TRUC_LADDER[pending.rung - 1], stake))
        _back_to_turn(state)
        return
    if call == Call.FOLD:
        # §6.3, §6.4: the caller's team scores the stake before this call; the hand ends.
        team = pending.caller % 2
        state.truc_call = None
        state.prompt = Prompt.TURN
        credits: list[Iterable[tuple[Credit, CreditReason]]] = [
            [(Credit(team, STAKES[pending.rung - 1]), CreditReason.FOLD)],
            _declaration_credits(state, events),
            _tambien_credits(state, events),
        ]
        _end_hand(state, events, credits, team, "fold")
        return
    # A counter-raise: the other side answers it in turn.
    if state.options.responder == Responder.CAPTAIN:
        answerer = CAPTAINS[pending.caller % 2]
    else:
        answerer = pending.caller
    state.truc_call = TrucCall(pending.rung + 1, seat, answerer)
    state.to_act = answerer
