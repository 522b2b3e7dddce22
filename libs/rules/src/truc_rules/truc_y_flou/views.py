"""The one place hidden information is removed: :func:`view_for`.

A :class:`GameView` has no field where another seat's unrevealed cards could
go: it holds the viewer's own hand, the sizes of the other hands, the cards
shown at showdowns, and public facts. Events go through the same function, so
a seat only ever sees its own deal and its own team's signals.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from truc_rules.cards import Card

from .actions import Action, Directive, Signal
from .constants import CAPTAINS, ESPINTOU, NUM_SEATS
from .declarations import hand_values
from .engine import legal_actions
from .events import Event, audience
from .options import RuleOptions
from .state import (
    PARTIDO,
    STAKES,
    EmbitContest,
    FlorExchange,
    GameState,
    Phase,
    Prompt,
    Trick,
    TrucCall,
)

__all__ = ["GameView", "view_for"]

_NOTHING_SHOWN: tuple[tuple[Card, ...], ...] = ((),) * NUM_SEATS


@dataclass(frozen=True, slots=True, kw_only=True)
class GameView:
    """What one seat (or a spectator, ``seat=None``) may know of a match."""

    seat: int | None
    options: RuleOptions
    phase: Phase
    prompt: Prompt
    to_act: int | None
    legal_actions: tuple[Action, ...]
    """The viewer's legal actions now (empty for a spectator)."""
    scores: tuple[int, int]
    """The current manche's scores; once the match is over, the last manche's
    final scores (its ``history`` entry's), not the 0-0 of a manche that will
    not be played."""
    manches: tuple[int, int]
    history: tuple[tuple[int, int, int], ...]
    espintou: tuple[bool, bool]
    """§2.3: shown for a team with 13 or more points."""
    belle: bool
    finished: bool
    winner: int | None
    hand_number: int
    hands_played: int
    dealer: int
    eldest: int
    captains: tuple[int, int]
    draws: tuple[tuple[Card, Card], ...]
    hand: tuple[Card, ...]
    """The viewer's cards still held (empty for a spectator)."""
    dealt: tuple[Card, ...]
    """The viewer's three cards as dealt (its declarations count them, §4.6)."""
    embit_value: int | None
    flor_value: int | None
    hand_sizes: tuple[int, ...]
    shown: tuple[tuple[Card, ...], ...]
    """Per seat, the cards it still holds that a showdown revealed."""
    tricks: tuple[Trick, ...]
    leader: int
    trick_cards: tuple[tuple[int, Card], ...]
    """The trick in progress as (seat, card)."""
    stake: int
    """What the hand is worth now (0 = the manche: BALOU_PARTIDO accepted)."""
    stake_level: int
    last_raiser: int
    truc_call: TrucCall | None
    embit: EmbitContest | None
    flors: tuple[FlorExchange, ...]
    decided: int
    signals: tuple[tuple[int, Signal | Directive], ...]
    """Signals and directives of the viewer's team this hand."""
    events: tuple[Event, ...]
    """The events given to view_for that the viewer may see."""


def view_for(state: GameState, seat: int | None, events: Iterable[Event] = ()) -> GameView:
    """The view of ``seat`` (0-5), or of a spectator when ``seat`` is None.

    ``events`` (for example those of a Transition, or a stored log) are
    filtered to the ones the viewer may see.
    """
    if seat is not None and not 0 <= seat < NUM_SEATS:
        raise ValueError(f"seat must be 0-5 or None, not {seat!r}")
    in_hand = state.phase == Phase.PLAY
    own_dealt: tuple[Card, ...] = state.dealt[seat] if seat is not None else ()
    team = seat % 2 if seat is not None else None
    visible_events = tuple(
        e for e in events if (who := audience(e)) is None or (seat is not None and seat in who)
    )
    if state.revealed:
        revealed = set(state.revealed)
        shown = tuple(tuple(c for c in h if c in revealed) for h in state.hands)
    else:
        shown = _NOTHING_SHOWN
    embit, flor = (
        hand_values(own_dealt, state.options.ace_value) if in_hand and own_dealt else (None, None)
    )
    target = state.options.target_score
    over = state.phase == Phase.MATCH_OVER
    scores = state.history[-1][1:] if over and state.history else state.scores
    return GameView(
        seat=seat,
        options=state.options,
        phase=state.phase,
        prompt=state.prompt,
        to_act=state.to_act,
        legal_actions=legal_actions(state, seat) if seat is not None else (),
        scores=scores,
        manches=state.manches,
        history=state.history,
        espintou=(scores[0] >= min(ESPINTOU, target), scores[1] >= min(ESPINTOU, target)),
        belle=state.belle,
        finished=over,
        winner=state.winner,
        hand_number=state.hand_number,
        hands_played=state.hands_played,
        dealer=state.dealer,
        eldest=state.eldest,
        captains=CAPTAINS,
        draws=state.draws,
        hand=state.hands[seat] if seat is not None else (),
        dealt=own_dealt,
        embit_value=embit,
        flor_value=flor,
        hand_sizes=tuple(len(h) for h in state.hands),
        shown=shown,
        tricks=state.tricks,
        leader=state.leader,
        trick_cards=tuple(
            ((state.leader + i) % NUM_SEATS, c) for i, c in enumerate(state.trick_cards)
        ),
        stake=STAKES[state.stake_level] if state.stake_level < PARTIDO else 0,
        stake_level=state.stake_level,
        last_raiser=state.last_raiser,
        truc_call=state.truc_call,
        embit=state.embit,
        flors=state.flors,
        decided=state.decided,
        signals=tuple(s for s in state.signals if team is not None and s[0] % 2 == team),
        events=visible_events,
    )
