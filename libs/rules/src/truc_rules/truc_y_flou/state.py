"""The full state of a match (hidden cards included).

Copy discipline: a :class:`GameState` is never changed once the engine has
returned it. The engine works on a :meth:`GameState.clone` (a shallow copy)
and only ever *reassigns* its fields; every field holds an immutable value
(ints, tuples, frozen records), so a clone shares nothing mutable with the
state it came from. Callers must treat states as immutable too. The full
state never leaves the service: seats see :func:`~truc_rules.truc_y_flou.views.view_for`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Final

from truc_rules.cards import Card
from truc_rules.tricks import NOBODY as _NOBODY
from truc_rules.tricks import UNDECIDED as _UNDECIDED

from .actions import Call, Directive, Signal
from .options import RuleOptions

__all__ = [
    "NOBODY",
    "PARTIDO",
    "STAKES",
    "UNDECIDED",
    "Credit",
    "Deal",
    "EmbitContest",
    "FlorExchange",
    "GameState",
    "Phase",
    "Prompt",
    "Trick",
    "TrucCall",
]

Deal = tuple[tuple[Card, ...], ...]
"""Six hands of three cards, seat 0 to seat 5."""

STAKES: Final = (1, 2, 3, 4, 6)
"""What the hand is worth at each stake level below partido (§6.1)."""
PARTIDO: Final = 5
"""The stake level of BALOU_PARTIDO: the hand's winner wins the manche."""
UNDECIDED: Final = _UNDECIDED
"""``GameState.decided`` while the tricks have not decided the hand."""
NOBODY: Final = _NOBODY
"""``GameState.decided`` when all three tricks were pardes (§3.5)."""


class Phase(IntEnum):
    DRAW = 0
    """The captains drew for the first deal; the winner names the dealer (§2.4)."""
    CUT = 1
    """Option cut=cutter: the cutter cuts before the deal (§2.5)."""
    PLAY = 2
    """A hand is being played."""
    NO_DEAL = 3
    """A game built from fixed deals ran out of deals: nobody acts."""
    MATCH_OVER = 4


class Prompt(IntEnum):
    """What the seat in ``to_act`` is being asked, during a hand."""

    TURN = 0
    """Its own turn: declare (trick 1), call truc, play a card."""
    EMBIT_POLL = 1
    """Answer the embit-family opening: PASS or a challenge (§5.2, §5.4)."""
    EMBIT_ANSWER = 2
    """Answer an embit raise for the calling side: ACCEPT or FOLD."""
    FLOR_POLL = 3
    """Answer a FLOR: PASS, FLOR_TAMBIEN, ALIMIDOU_CON_FLOR (§5.8)."""
    FLOR_DECLARER = 4
    """The declarer answers ALIMIDOU_CON_FLOR."""
    FLOR_CHALLENGER = 5
    """The challenger answers ALIMIDOU_CANTAR or ALIBARESTOU_CON_FLOR."""
    TRUC_ANSWER = 6
    """Answer a truc call: ACCEPT, FOLD or the next rung (§6.3)."""


@dataclass(frozen=True, slots=True)
class Credit:
    """Points due to a team; ``wins_manche`` sets its score to the target (§2.2)."""

    team: int
    points: int
    wins_manche: bool = False


@dataclass(frozen=True, slots=True)
class EmbitContest:
    """The one embit-family contest of a hand (§5.1, §5.4-§5.7)."""

    call: Call
    """EMBIDE, MI_FALTA or RESTOU_Y_TROUCOU."""
    opener: int
    rest: int
    """The opener's team's rest when it called (§5.6), for MI_FALTA."""
    polled: int = 0
    """Poll answers given so far (opponents ``opener+1, +3, +5``)."""
    challenge: Call | None = None
    """CANTAR or a raise, once an opponent challenged."""
    challenger: int = -1
    raise_points: int = 0
    """What a raise adds: 1, 2, 10 or the challenger's rest (RESTOU)."""
    answer: Call | None = None
    """ACCEPT or FOLD, the calling side's answer to a raise."""
    result: Credit | None = None
    """Known once the contest is settled; credited per §5.10."""
    credited: bool = False
    """Credited, voided by a flor, or otherwise used up."""


@dataclass(frozen=True, slots=True)
class FlorExchange:
    """One FLOR and its answers (§5.8)."""

    declarer: int
    polled: int = 0
    challenge: Call | None = None
    """FLOR_TAMBIEN or ALIMIDOU_CON_FLOR."""
    challenger: int = -1
    declarer_answer: Call | None = None
    """FOLD, ALIMIDOU_CANTAR or ALIBARESTOU_CON_FLOR."""
    challenger_answer: Call | None = None
    """FOLD or ACCEPT."""
    result: Credit | None = None
    """Known once settled (a FLOR_TAMBIEN comparison only at the end of the hand)."""
    credited: bool = False


@dataclass(frozen=True, slots=True)
class TrucCall:
    """A truc call waiting for its answer."""

    rung: int
    """The stake level it proposes, 1 (TRUC) to 5 (BALOU_PARTIDO)."""
    caller: int
    answerer: int


@dataclass(frozen=True, slots=True)
class Trick:
    """A completed trick."""

    leader: int
    cards: tuple[Card, ...]
    """In the order played, starting with the leader's."""
    winner_team: int | None
    """None when pardes (§3.3)."""
    winning_seat: int | None
    """The winning team's first card of the top class; it leads next (§3.4)."""


@dataclass(slots=True, kw_only=True)
class GameState:
    """Everything about a match. See the module docstring for the copy discipline."""

    options: RuleOptions
    seed: int | None
    """Seeds every deal; None when the game is played from fixed deals."""
    deals: tuple[Deal, ...]
    """Fixed deals not dealt yet (scenarios and the service's test flag)."""
    draws: tuple[tuple[Card, Card], ...]
    """The captains' draws for the first deal, team A's card first (§2.4)."""
    phase: Phase
    to_act: int | None
    """The one seat expected to act (§8); None when nobody is."""
    prompt: Prompt
    scores: tuple[int, int]
    manches: tuple[int, int]
    history: tuple[tuple[int, int, int], ...]
    """Finished manches: (winner team, final score A, final score B)."""
    hand_number: int
    """Hands dealt so far; the current hand's number (1-based)."""
    hands_played: int
    """Hands completed or abandoned."""
    dealer: int
    dealt: Deal
    """The current hand as dealt (declaration values use it, §4.6)."""
    hands: Deal
    """Cards still held."""
    stock: tuple[Card, ...]
    """The 22 cards not dealt."""
    tricks: tuple[Trick, ...]
    """Completed tricks of the current hand."""
    leader: int
    trick_cards: tuple[Card, ...]
    """Cards of the trick in progress, from the leader's."""
    declared: int
    """Bit ``s`` set once seat ``s`` has made its declaration (§5.1)."""
    truc_called: bool
    """The seat on turn has had its truc exchange this turn (§6.2)."""
    stake_level: int
    """0 (no call, 1 point) to PARTIDO."""
    last_raiser: int
    """The team whose truc call was the last accepted, or -1 (§6.2)."""
    truc_call: TrucCall | None
    embit: EmbitContest | None
    flors: tuple[FlorExchange, ...]
    decided: int
    """UNDECIDED, the team that won the hand by its tricks, or NOBODY."""
    revealed: tuple[Card, ...]
    """Cards shown at showdowns this hand (public from then on)."""
    signals: tuple[tuple[int, Signal | Directive], ...]
    """Signals and directives sent this hand, as (seat, message)."""

    @property
    def turn(self) -> int:
        """The seat whose card is next in the current trick."""
        return (self.leader + len(self.trick_cards)) % 6

    @property
    def eldest(self) -> int:
        return (self.dealer + 1) % 6

    @property
    def belle(self) -> bool:
        """The manche being played decides the match after a tie (1-1 in a best of
        three: *la belle*). A match of one manche has no belle."""
        wins = self.options.manches_to_win
        return wins > 1 and self.manches[0] == self.manches[1] == wins - 1

    @property
    def winner(self) -> int | None:
        """The team that won the match, once it is over."""
        if self.phase != Phase.MATCH_OVER:
            return None
        return 0 if self.manches[0] > self.manches[1] else 1

    def clone(self) -> GameState:
        """A shallow copy for the engine to reassign fields on.

        Written out field by field (the fastest copy, also when compiled);
        ``tests/rules/test_state.py`` checks that it copies every field.
        """
        new = GameState.__new__(GameState)
        new.options = self.options
        new.seed = self.seed
        new.deals = self.deals
        new.draws = self.draws
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
        new.declared = self.declared
        new.truc_called = self.truc_called
        new.stake_level = self.stake_level
        new.last_raiser = self.last_raiser
        new.truc_call = self.truc_call
        new.embit = self.embit
        new.flors = self.flors
        new.decided = self.decided
        new.revealed = self.revealed
        new.signals = self.signals
        return new
