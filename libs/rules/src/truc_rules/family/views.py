"""The one place hidden information is removed for the variants.md rule sets:
:func:`view_for`.

A :class:`FamilyView` has no field where another seat's cards could go: the
viewer's own hand, the sizes of the other hands, and public facts. Events go
through the same function (a seat sees only its own deal and its own team's
signals), and so do the instructions: a seat sees the one binding it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from truc_rules.actions import Action, Call, Directive, Signal
from truc_rules.cards import Card
from truc_rules.events import Event, audience
from truc_rules.rule_set import RuleSet

from .engine import legal_actions
from .state import FamilyState, Pending, Phase, Prompt, Trick
from .variant import FamilyOptions

__all__ = ["FamilyView", "view_for"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FamilyView:
    """What one seat (or a spectator, ``seat=None``) may know of a match."""

    seat: int | None
    rule_set: RuleSet
    options: FamilyOptions
    seat_count: int
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
    belle: bool
    finished: bool
    winner: int | None
    hand_number: int
    hands_played: int
    dealer: int
    eldest: int
    governors: tuple[int, ...]
    """partnership_truc: the dealer and eldest; empty otherwise."""
    hand: tuple[Card, ...]
    """The viewer's cards still held (empty for a spectator)."""
    dealt: tuple[Card, ...]
    hand_sizes: tuple[int, ...]
    tricks: tuple[Trick, ...]
    leader: int
    trick_cards: tuple[tuple[int, Card], ...]
    """The trick in progress as (seat, card)."""
    stake: int
    """What the hand is worth now; 0 once MON_RESTE was answered MON_RESTE
    (the hand decides the game)."""
    stake_call: Call | None
    pending: Pending | None
    mon_reste: bool
    redeal_proposed: bool
    decided: int
    signals: tuple[tuple[int, Signal | Directive], ...]
    """Signals and directives of the viewer's team this hand."""
    instruction: Directive | None
    """The instruction binding the viewer's next card (V4.5), if any."""
    events: tuple[Event, ...]


def view_for(state: FamilyState, seat: int | None, events: Iterable[Event] = ()) -> FamilyView:
    """The view of ``seat``, or of a spectator when ``seat`` is None; ``events``
    are filtered to those the viewer may see."""
    seats = state.seats
    if seat is not None and not 0 <= seat < seats:
        raise ValueError(f"seat must be 0-{seats - 1} or None, not {seat!r}")
    team = seat % 2 if seat is not None else None
    over = state.phase == Phase.MATCH_OVER
    scores = state.history[-1][1:] if over and state.history else state.scores
    return FamilyView(
        seat=seat,
        rule_set=state.variant.rule_set,
        options=state.options,
        seat_count=seats,
        phase=state.phase,
        prompt=state.prompt,
        to_act=state.to_act,
        legal_actions=legal_actions(state, seat) if seat is not None else (),
        scores=scores,
        manches=state.manches,
        history=state.history,
        belle=state.belle,
        finished=over,
        winner=state.winner,
        hand_number=state.hand_number,
        hands_played=state.hands_played,
        dealer=state.dealer,
        eldest=state.eldest,
        governors=state.governors,
        hand=state.hands[seat] if seat is not None else (),
        dealt=state.dealt[seat] if seat is not None else (),
        hand_sizes=tuple(len(h) for h in state.hands),
        tricks=state.tricks,
        leader=state.leader,
        trick_cards=tuple(((state.leader + i) % seats, c) for i, c in enumerate(state.trick_cards)),
        stake=0 if state.mon_reste else state.stake,
        stake_call=state.stake_call,
        pending=state.pending,
        mon_reste=state.mon_reste,
        redeal_proposed=state.redeal_proposed,
        decided=state.decided,
        signals=tuple(s for s in state.signals if team is not None and s[0] % 2 == team),
        instruction=state.instructions[seat] if seat is not None else None,
        events=tuple(
            e
            for e in events
            if (who := audience(e, seats)) is None or (seat is not None and seat in who)
        ),
    )
