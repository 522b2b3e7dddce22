"""The full state of a match of a variants.md rule set (hidden cards included).

The copy discipline is Truc y Flou's (:mod:`truc_rules.truc_y_flou.state`): a
:class:`FamilyState` is never changed once the engine returned it; the engine
works on a :meth:`FamilyState.clone` and only reassigns fields holding
immutable values. The full state never leaves the service: seats see
:func:`~truc_rules.family.views.view_for`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from truc_rules.actions import Call, Directive, Signal
from truc_rules.cards import Card
from truc_rules.tricks import NOBODY, UNDECIDED

from .variant import FamilyOptions, Variant

__all__ = ["NOBODY", "UNDECIDED", "Deal", "FamilyState", "Pending", "Phase", "Prompt", "Trick"]

Deal = tuple[tuple[Card, ...], ...]
"""One hand of three cards per seat, seat 0 first."""


class Phase(IntEnum):
    """The same numbers as Truc y Flou's phases (these rule sets have no draw or cut)."""

    PLAY = 2
    """A hand is being played."""
    NO_DEAL = 3
    """A game built from fixed deals ran out of deals: nobody acts."""
    MATCH_OVER = 4


class Prompt(IntEnum):
    """What the seat in ``to_act`` is being asked."""

    TURN = 0
    """Its own turn: play a card, raise, call MON_RESTE, propose a redeal, concede."""
    RAISE_ANSWER = 7
    """Answer a RAISE, TRUC or RETRUC: ACCEPT or FOLD."""
    MON_RESTE_ANSWER = 8
    """Answer a MON_RESTE: FOLD or MON_RESTE."""
    REDEAL_ANSWER = 9
    """The dealer answers PROPOSE_REDEAL: ACCEPT or REFUSE."""


@dataclass(frozen=True, slots=True)
class Pending:
    """A call waiting for its answer."""

    call: Call
    """RAISE, TRUC, RETRUC, MON_RESTE or PROPOSE_REDEAL."""
    caller: int
    answerer: int
    stake: int
    """The stake the call proposes (for MON_RESTE: the caller's need)."""


@dataclass(frozen=True, slots=True)
class Trick:
    """A completed trick."""

    leader: int
    cards: tuple[Card, ...]
    """In the order played, starting with the leader's."""
    winner_team: int | None
    """None when spoiled (V1.4)."""
    winning_seat: int | None
    """The seat that leads next when the trick was won."""


@dataclass(slots=True, kw_only=True)
class FamilyState:
    """Everything about a match. See the module docstring for the copy discipline."""

    variant: Variant
    options: FamilyOptions
    seed: int | None
    """Seeds every deal; None when the game is played from fixed deals."""
    deals: tuple[Deal, ...]
    """Fixed deals not dealt yet (a redeal takes the next one, V7)."""
    phase: Phase
    to_act: int | None
    """The one seat expected to act; None when nobody is."""
    prompt: Prompt
    scores: tuple[int, int]
    manches: tuple[int, int]
    history: tuple[tuple[int, int, int], ...]
    """Finished games: (winner team, final score A, final score B)."""
    hand_number: int
    hands_played: int
    """Hands completed (a redealt hand is not one: it goes on with new cards)."""
    dealer: int
    dealt: Deal
    """The current hand as dealt (after a redeal, the new cards)."""
    hands: Deal
    """Cards still held."""
    stock: tuple[Card, ...]
    """The rest of the pack, in dealing order (a redeal deals from it)."""
    tricks: tuple[Trick, ...]
    leader: int
    trick_cards: tuple[Card, ...]
    stake: int
    """What the hand is worth now (points)."""
    stake_call: Call | None
    """The last accepted raise (RAISE, TRUC, RETRUC) or MON_RESTE."""
    raised: bool
    """The seat on turn has made its one raise of this turn (V1.7)."""
    pending: Pending | None
    mon_reste: bool
    """MON_RESTE was answered MON_RESTE: the hand decides the game (V2.4)."""
    redeal_proposed: bool
    """A redeal was proposed this hand: no other may be (V2.5)."""
    decided: int
    """UNDECIDED, the team that won the hand by its tricks, or NOBODY."""
    signals: tuple[tuple[int, Signal | Directive], ...]
    """Signals and directives sent this hand, as (seat, message)."""
    instructions: tuple[Directive | None, ...]
    """Per seat, the instruction binding its next card (V4.5), or None."""

    @property
    def seats(self) -> int:
        return self.options.seats

    @property
    def turn(self) -> int:
        """The seat whose card is next in the current trick."""
        return (self.leader + len(self.trick_cards)) % self.options.seats

    @property
    def eldest(self) -> int:
        return (self.dealer + 1) % self.options.seats

    @property
    def governors(self) -> tuple[int, ...]:
        """V4.2: this hand's dealer and eldest (empty without governors)."""
        if not self.variant.governors:
            return ()
        return (self.dealer, self.eldest)

    @property
    def belle(self) -> bool:
        """The game being played decides the match after a tie."""
        wins = self.options.manches_to_win
        return wins > 1 and self.manches[0] == self.manches[1] == wins - 1

    @property
    def winner(self) -> int | None:
        """The team that won the match, once it is over."""
        if self.phase != Phase.MATCH_OVER:
            return None
        return 0 if self.manches[0] > self.manches[1] else 1

    def clone(self) -> FamilyState:
        """A shallow copy for the engine to reassign fields on.

        Written out field by field (the fastest copy); ``tests/rules/test_family_state.py``
        checks that it copies every field.
        """
        new = FamilyState.__new__(FamilyState)
        new.variant = self.variant
        new.options = self.options
        new.seed = self.seed
        new.deals = self.deals
        new.phase = self.phase
        new.to_act = self.to_act
        new.prompt = self.prompt
        new.scores = self.scores
        new.manches = self.manches
        new.history = self.history
        new.hand_number = self.hand_number
        new.hands_played = self.hands_played
        new.dealer = self.dealer
        new.dealt = self.dealt
        new.hands = self.hands
        new.stock = self.stock
        new.tricks = self.tricks
        new.leader = self.leader
        new.trick_cards = self.trick_cards
        new.stake = self.stake
        new.stake_call = self.stake_call
        new.raised = self.raised
        new.pending = self.pending
        new.mon_reste = self.mon_reste
        new.redeal_proposed = self.redeal_proposed
        new.decided = self.decided
        new.signals = self.signals
        new.instructions = self.instructions
        return new
