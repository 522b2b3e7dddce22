"""Events in words, for game logs and the terminal demo.

Pure presentation: one line per event (or None for events that say nothing
new to a reader). Seats are named ``S0``..``S5`` with their team, e.g. ``S3(B)``.
"""

from __future__ import annotations

from .rules.cards import Card
from .rules.constants import TEAM_NAMES
from .rules.events import (
    Called,
    CardPlayed,
    CardsDealt,
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

__all__ = ["describe", "seat_name"]

_SUIT_SYMBOL = {"Sw": "⚔", "Cl": "♣", "Co": "☀", "Cu": "♥"}


def seat_name(seat: int) -> str:
    return f"S{seat}({TEAM_NAMES[seat % 2]})"


def card_text(card: Card) -> str:
    text = str(card)
    return f"{text}{_SUIT_SYMBOL[text[-2:]]}"


def _cards(cards: tuple[Card, ...]) -> str:
    return " ".join(card_text(c) for c in cards)


def _shown(shown: tuple[Shown, ...]) -> str:
    parts = []
    for s in shown:
        if s.cards:
            value = s.value if s.has_declaration else f"high card {s.value}"
            parts.append(f"{seat_name(s.seat)} {value} [{_cards(s.cards)}]")
        else:
            parts.append(f"{seat_name(s.seat)} nothing")
    return " vs ".join(parts)


def describe(event: Event) -> str | None:
    """The event as one readable line."""
    match event:
        case DrawCard(seat, card):
            return f"{seat_name(seat)} draws {card_text(card)} for the first deal"
        case DealerChosen(seat, dealer):
            who = "the start position" if seat < 0 else seat_name(seat)
            return f"{who} names {seat_name(dealer)} first dealer"
        case HandStarted(number, dealer, eldest, _cutter, manche, belle):
            label = "la belle" if belle else f"manche {manche}"
            return (
                f"── hand {number} ({label}): {seat_name(dealer)} deals, {seat_name(eldest)} leads"
            )
        case DeckCut(seat, position):
            return f"{seat_name(seat)} cuts the pack at {position}"
        case CardsDealt(seat, cards, embit, flor):
            extra = []
            if flor is not None:
                extra.append(f"flor {flor}")
            if embit is not None:
                extra.append(f"embit {embit}")
            tail = f"  ({', '.join(extra)})" if extra else ""
            return f"   {seat_name(seat)} holds {_cards(cards)}{tail}"
        case DealsExhausted():
            return "no deal left"
        case Called(seat, call):
            return f"{seat_name(seat)}: {call}"
        case DeclarationSettled(contest, team, points, wins_manche, shown):
            gain = "wins the manche" if wins_manche else f"+{points} (credited later)"
            versus = f": {_shown(shown)}" if shown else ""
            return f"{contest} settled for team {TEAM_NAMES[team]}, {gain}{versus}"
        case FlorShowdown(team, shown):
            return f"flor tambien compared: {_shown(shown)}; team {TEAM_NAMES[team]} +3"
        case EmbitVoided(team, points):
            return f"a flor voids the embit (team {TEAM_NAMES[team]} loses its {points})"
        case StakeRaised(call, stake):
            worth = "the manche" if stake == 0 else f"{stake} points"
            return f"{call} accepted: the hand is worth {worth}"
        case CardPlayed(seat, card, _trick):
            return f"{seat_name(seat)} plays {card_text(card)}"
        case TrickCompleted(number, team, seat, _next):
            if team is None:
                return f"trick {number} is pardes"
            assert seat is not None
            return f"trick {number} to team {TEAM_NAMES[team]} ({seat_name(seat)})"
        case PointsCredited(team, points, reason, scores):
            score = f"A {scores[0]} - B {scores[1]}"
            return f"team {TEAM_NAMES[team]} +{points} ({reason.lower()}) → {score}"
        case HandEnded(number, _team, how):
            return f"hand {number} over ({how.replace('_', ' ')})"
        case MancheEnded(team, scores, manches):
            return (
                f"══ manche to team {TEAM_NAMES[team]}, {scores[0]}-{scores[1]}; "
                f"manches A {manches[0]} - B {manches[1]}"
            )
        case MatchEnded(team, manches):
            return f"══ team {TEAM_NAMES[team]} wins the match {manches[team]}-{manches[1 - team]}"
        case SignalSent(seat, signal):
            return f"{seat_name(seat)} signals {signal} to the team"
        case DirectiveSent(seat, directive):
            return f"{seat_name(seat)} directs the team: {directive}"
    return None
