"""Game events (``truc.v1.Event``) in words, for terminals and logs.

Seats are written ``S3(B)``: seat 3, team B. Cards are rank then suit with a
symbol: ``7Sw⚔``, ``1Cl♣``, ``JCo☀``, ``KCu♥``.
"""

from __future__ import annotations

from typing import Final

from truc.v1 import cards_pb2, game_pb2

__all__ = [
    "action_text",
    "call_name",
    "card_text",
    "describe",
    "prompt_text",
    "seat_name",
    "team_name",
]

_RANKS: Final = ("", "1", "2", "3", "4", "5", "6", "7", "J", "N", "K")
_SUITS: Final = ("", "Sw⚔", "Cl♣", "Co☀", "Cu♥")


def seat_name(seat: int) -> str:
    return f"S{seat}({'AB'[seat % 2]})"


def card_text(card: cards_pb2.Card) -> str:
    return _RANKS[card.rank] + _SUITS[card.suit]


def _cards(cards: object) -> str:
    return " ".join(card_text(c) for c in cards)  # type: ignore[attr-defined]


def call_name(call: int) -> str:
    """A call as the rules name it: ``TRUC``, ``DUS_DE_MES``."""
    return game_pb2.Call.Name(call).removeprefix("CALL_")  # type: ignore[arg-type]


def team_name(team: int) -> str:
    """``A``, ``B``, or ``-`` for TEAM_UNSPECIFIED."""
    return "A" if team == game_pb2.TEAM_A else "B" if team == game_pb2.TEAM_B else "-"


_PROMPTS: Final[dict[int, tuple[str, str]]] = {
    game_pb2.PROMPT_TURN: ("plays (or declares, or calls truc)", "play (or declare, or call truc)"),
    game_pb2.PROMPT_EMBIT_POLL: ("answers the embit", "answer the embit"),
    game_pb2.PROMPT_EMBIT_ANSWER: ("answers the embit raise", "answer the embit raise"),
    game_pb2.PROMPT_FLOR_POLL: ("answers the flor", "answer the flor"),
    game_pb2.PROMPT_FLOR_DECLARER: ("answers the flor challenge", "answer the flor challenge"),
    game_pb2.PROMPT_FLOR_CHALLENGER: ("answers the flor declarer", "answer the flor declarer"),
    game_pb2.PROMPT_TRUC_ANSWER: ("answers the truc call", "answer the truc call"),
}


def prompt_text(view: game_pb2.GameView, *, you: bool = False) -> str:
    """What the seat to act is asked, in words ("" when nobody acts).

    ``you``: addressed to that seat ("answer the truc call"), else about it
    ("answers the truc call").
    """
    if not view.HasField("to_act"):
        return ""
    if view.phase == game_pb2.PHASE_DRAW:
        pair = ("names the first dealer", "name the first dealer")
    elif view.phase == game_pb2.PHASE_CUT:
        pair = ("cuts the pack", "cut the pack")
    else:
        pair = _PROMPTS.get(view.prompt, ("acts", "act"))
    return pair[1] if you else pair[0]


def action_text(action: game_pb2.Action) -> str:
    """A legal action in words: ``play 7Sw⚔``, ``call TRUC``, ``signal ESPASA``."""
    kind = action.WhichOneof("kind")
    if kind == "play_card":
        return f"play {card_text(action.play_card)}"
    if kind == "call":
        return f"call {call_name(action.call)}"
    if kind == "signal":
        return f"signal {game_pb2.Signal.Name(action.signal).removeprefix('SIGNAL_')}"
    if kind == "directive":
        name = game_pb2.Directive.Name(action.directive).removeprefix("DIRECTIVE_")
        return f"direct {name}"
    if kind == "choose_dealer":
        return f"name {seat_name(action.choose_dealer)} dealer"
    if kind == "cut_deck":
        return f"cut {action.cut_deck} cards"
    return "nothing"


def _shown(shown: object) -> str:
    parts = []
    for s in shown:  # type: ignore[attr-defined]
        if s.cards:
            value = s.value if s.has_declaration else f"high card {s.value}"
            parts.append(f"{seat_name(s.seat)} {value} [{_cards(s.cards)}]")
        else:
            parts.append(f"{seat_name(s.seat)} nothing")
    return " vs ".join(parts)


def describe(event: game_pb2.Event) -> str | None:
    """One line for the event, or None for events a reader need not see."""
    kind = event.WhichOneof("kind")
    if kind == "draw_card":
        draw_card = event.draw_card
        return f"{seat_name(draw_card.seat)} draws {card_text(draw_card.card)} for the first deal"
    if kind == "dealer_chosen":
        dealer_chosen = event.dealer_chosen
        who = seat_name(dealer_chosen.seat) if dealer_chosen.HasField("seat") else "the table"
        return f"{who} names {seat_name(dealer_chosen.dealer)} first dealer"
    if kind == "hand_started":
        hand_started = event.hand_started
        label = "la belle" if hand_started.belle else f"manche {hand_started.manche}"
        dealer, eldest = seat_name(hand_started.dealer), seat_name(hand_started.eldest)
        return f"── hand {hand_started.hand_number} ({label}): {dealer} deals, {eldest} leads"
    if kind == "deck_cut":
        return f"{seat_name(event.deck_cut.seat)} cuts the pack at {event.deck_cut.position}"
    if kind == "deals_exhausted":
        return "no deal left"
    if kind == "cards_dealt":
        cards_dealt = event.cards_dealt
        extra = [f"flor {cards_dealt.flor}"] if cards_dealt.HasField("flor") else []
        extra += [f"embit {cards_dealt.embit}"] if cards_dealt.HasField("embit") else []
        tail = f"  ({', '.join(extra)})" if extra else ""
        return f"   {seat_name(cards_dealt.seat)} holds {_cards(cards_dealt.cards)}{tail}"
    if kind == "called":
        return f"{seat_name(event.called.seat)}: {call_name(event.called.call)}"
    if kind == "declaration_settled":
        declaration_settled = event.declaration_settled
        contest = (
            game_pb2.Contest.Name(declaration_settled.contest).removeprefix("CONTEST_").lower()
        )
        gain = (
            "wins the manche"
            if declaration_settled.wins_manche
            else f"+{declaration_settled.points} (credited later)"
        )
        versus = f": {_shown(declaration_settled.shown)}" if declaration_settled.shown else ""
        return f"{contest} settled for team {team_name(declaration_settled.team)}, {gain}{versus}"
    if kind == "flor_showdown":
        flor_showdown = event.flor_showdown
        shown = _shown(flor_showdown.shown)
        return f"flor tambien compared: {shown}; team {team_name(flor_showdown.winner)} +3"
    if kind == "embit_voided":
        return f"a flor voids the embit (team {team_name(event.embit_voided.team)} loses it)"
    if kind == "stake_raised":
        stake_raised = event.stake_raised
        worth = "the manche" if stake_raised.stake == 0 else f"{stake_raised.stake} points"
        return f"{call_name(stake_raised.call)} accepted: the hand is worth {worth}"
    if kind == "card_played":
        return f"{seat_name(event.card_played.seat)} plays {card_text(event.card_played.card)}"
    if kind == "trick_completed":
        trick_completed = event.trick_completed
        if trick_completed.winner == game_pb2.TEAM_UNSPECIFIED:
            return f"trick {trick_completed.trick} is pardes"
        team = team_name(trick_completed.winner)
        winner = seat_name(trick_completed.winning_seat)
        return f"trick {trick_completed.trick} to team {team} ({winner})"
    if kind == "points_credited":
        points_credited = event.points_credited
        reason = (
            game_pb2.CreditReason.Name(points_credited.reason)
            .removeprefix("CREDIT_REASON_")
            .lower()
        )
        return (
            f"team {team_name(points_credited.team)} +{points_credited.points} ({reason}) → "
            f"A {points_credited.scores.team_a} - B {points_credited.scores.team_b}"
        )
    if kind == "hand_ended":
        how = game_pb2.HandEnd.Name(event.hand_ended.how).removeprefix("HAND_END_").lower()
        return f"hand {event.hand_ended.hand_number} over ({how.replace('_', ' ')})"
    if kind == "manche_ended":
        manche_ended = event.manche_ended
        return (
            f"══ manche to team {team_name(manche_ended.winner)}, "
            f"{manche_ended.scores.team_a}-{manche_ended.scores.team_b}; "
            f"manches A {manche_ended.manches.team_a} - B {manche_ended.manches.team_b}"
        )
    if kind == "match_ended":
        match_ended = event.match_ended
        score = f"{match_ended.manches.team_a}-{match_ended.manches.team_b}"
        return f"══ team {team_name(match_ended.winner)} wins the match ({score})"
    if kind == "signal_sent":
        signal_sent = event.signal_sent
        name = game_pb2.Signal.Name(signal_sent.signal).removeprefix("SIGNAL_")
        return f"{seat_name(signal_sent.seat)} signals {name} to the team"
    if kind == "directive_sent":
        directive_sent = event.directive_sent
        name = game_pb2.Directive.Name(directive_sent.directive).removeprefix("DIRECTIVE_")
        return f"{seat_name(directive_sent.seat)} directs the team: {name}"
    if kind == "turn_timed_out":
        timed_out = event.turn_timed_out
        done = action_text(timed_out.action) if timed_out.HasField("action") else "nothing"
        return f"{seat_name(timed_out.seat)} ran out of time (acted for: {done})"
    return None
