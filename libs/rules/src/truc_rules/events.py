"""Events: what an action caused, complete enough to drive a UI and write a log.

One vocabulary for every rule set of the family (a rule set emits the events
it has: the declarations and draws are Truc y Flou's).

Most events are public. :class:`CardsDealt` is private to its seat, and
:class:`SignalSent`/:class:`DirectiveSent` to the sender's team; the only way
events reach a seat is :func:`truc_rules.truc_y_flou.views.view_for`, which filters
them (see :func:`audience`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from truc_rules.actions import Action, Call, Directive, Signal
from truc_rules.cards import Card

__all__ = [
    "Called",
    "CardPlayed",
    "CardsDealt",
    "CreditReason",
    "DealerChosen",
    "DealsExhausted",
    "DeckCut",
    "DeclarationSettled",
    "DirectiveSent",
    "DrawCard",
    "EmbitVoided",
    "Event",
    "FlorShowdown",
    "HandEnded",
    "HandStarted",
    "MancheEnded",
    "MatchEnded",
    "PointsCredited",
    "Shown",
    "SignalSent",
    "StakeRaised",
    "TrickCompleted",
    "TurnTimedOut",
    "audience",
]


class CreditReason(StrEnum):
    """Why points were credited (§5.10 lists when)."""

    EMBIT = "EMBIT"
    """The embit-family result of the hand."""
    FLOR = "FLOR"
    """A flor exchange settled in trick 1 (unopposed, folded, alimidou, alibarestou)."""
    FLOR_TAMBIEN = "FLOR_TAMBIEN"
    """A FLOR_TAMBIEN comparison, at the end of the hand."""
    BONUS = "BONUS"
    """The Espasa (+2) and/or Basto (+1) in a trick (§3.8)."""
    HAND = "HAND"
    """The hand's winner scores the stake (§3.7, §6.1)."""
    FOLD = "FOLD"
    """A refused truc call or a passed RESTOU_Y_TROUCOU ends the hand (§6.3, §5.7)."""


@dataclass(frozen=True, slots=True)
class DrawCard:
    """A captain drew a card for the first deal (§2.4)."""

    seat: int
    card: Card


@dataclass(frozen=True, slots=True)
class DealerChosen:
    seat: int
    """The captain who chose (or -1 when the start position fixed the dealer)."""
    dealer: int


@dataclass(frozen=True, slots=True)
class HandStarted:
    hand_number: int
    """1 for the first hand of the match."""
    dealer: int
    eldest: int
    cutter: int
    manche: int
    """1, 2 or 3; the third after 1-1 is la belle."""
    belle: bool


@dataclass(frozen=True, slots=True)
class DeckCut:
    seat: int
    position: int


@dataclass(frozen=True, slots=True)
class CardsDealt:
    """Private to ``seat``: its three cards and their declaration values."""

    seat: int
    cards: tuple[Card, ...]
    embit: int | None
    flor: int | None


@dataclass(frozen=True, slots=True)
class DealsExhausted:
    """A game built from fixed deals has none left: no seat is expected to act."""


@dataclass(frozen=True, slots=True)
class Called:
    """A seat made a call (a declaration, a poll answer, a truc call or answer)."""

    seat: int
    call: Call


@dataclass(frozen=True, slots=True)
class Shown:
    """One seat's showdown value and the cards that make it (now public)."""

    seat: int
    value: int
    has_declaration: bool
    """False when the seat has no embit (its highest single card decides, §4.5)
    or, in a flor comparison, no flor at all."""
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class DeclarationSettled:
    """The result of the embit contest or of one flor exchange is known.

    It is credited later (§5.10), unless a flor voids the embit (§5.9) or the
    manche ends first.
    """

    contest: str
    """``"embit"`` or ``"flor"``."""
    team: int
    points: int
    wins_manche: bool
    shown: tuple[Shown, ...]
    """The showdown, winner first (empty when nothing was compared)."""


@dataclass(frozen=True, slots=True)
class FlorShowdown:
    """A FLOR_TAMBIEN comparison made at the end of the hand."""

    winner_team: int
    shown: tuple[Shown, ...]


@dataclass(frozen=True, slots=True)
class EmbitVoided:
    """A flor was declared, so the embit-family result of the hand is void (§5.9)."""

    team: int
    points: int


@dataclass(frozen=True, slots=True)
class StakeRaised:
    """A truc call was accepted: the hand is now worth ``stake`` (0 = the manche)."""

    call: Call
    stake: int


@dataclass(frozen=True, slots=True)
class CardPlayed:
    seat: int
    card: Card
    trick: int
    """1, 2 or 3."""


@dataclass(frozen=True, slots=True)
class TrickCompleted:
    trick: int
    winner_team: int | None
    """None when the trick is pardes (§3.3)."""
    winning_seat: int | None
    next_leader: int | None
    """None when the hand is over."""


@dataclass(frozen=True, slots=True)
class PointsCredited:
    team: int
    points: int
    """Points won (for a manche-winning result: what it took to reach the target)."""
    reason: CreditReason
    scores: tuple[int, int]
    """Scores after the credit."""


@dataclass(frozen=True, slots=True)
class HandEnded:
    hand_number: int
    winner_team: int | None
    """The hand's winner by tricks or fold; None if nobody (all pardes) or abandoned."""
    how: str
    """``"tricks"``, ``"fold"``, ``"all_pardes"`` or ``"manche_over"`` (abandoned)."""


@dataclass(frozen=True, slots=True)
class MancheEnded:
    winner_team: int
    scores: tuple[int, int]
    manches: tuple[int, int]


@dataclass(frozen=True, slots=True)
class MatchEnded:
    winner_team: int
    manches: tuple[int, int]


@dataclass(frozen=True, slots=True)
class SignalSent:
    """Team-private: a true signal about a card the sender holds."""

    seat: int
    signal: Signal


@dataclass(frozen=True, slots=True)
class DirectiveSent:
    """Team-private: a captain's directive."""

    seat: int
    directive: Directive


@dataclass(frozen=True, slots=True)
class TurnTimedOut:
    """The seat to act let its turn deadline pass, so the service took ``action``
    for it (:func:`~truc_rules.truc_y_flou.defaults.default_action`). The engine never
    emits it (it has no clock); it is here so that game logs have one vocabulary."""

    seat: int
    action: Action


Event = (
    DrawCard
    | DealerChosen
    | HandStarted
    | DeckCut
    | CardsDealt
    | DealsExhausted
    | Called
    | DeclarationSettled
    | FlorShowdown
    | EmbitVoided
    | StakeRaised
    | CardPlayed
    | TrickCompleted
    | PointsCredited
    | HandEnded
    | MancheEnded
    | MatchEnded
    | SignalSent
    | DirectiveSent
    | TurnTimedOut
)


def audience(event: Event, seats: int = 6) -> tuple[int, ...] | None:
    """The seats (of a table of ``seats``) that may see ``event``, or None when
    it is public. Teams alternate around the table: a team is every other seat."""
    if isinstance(event, CardsDealt):
        return (event.seat,)
    if isinstance(event, SignalSent | DirectiveSent):
        return tuple(range(event.seat % 2, seats, 2))
    return None
