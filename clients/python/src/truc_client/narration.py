"""Game events (``truc.v1.Event``) in words, for terminals and logs, in the
words of each rule set of the family.

Seats are written ``S3(B)``: seat 3, team B. Cards are rank then suit with a
symbol: ``7Sw⚔``, ``1Cl♣``, ``JCo☀``, ``KCu♥`` in the Spanish pack (Truc y
Flou, Catalan Truc); ``7He♥``, ``8Cl♣``, ``TSp♠``, ``QDi♦``, ``AHe♥`` in the
piquet pack (French, Sackson and partnership Truc). Both packs' clubs are
``Cl♣``: a card is read in its game's pack, as the protocol says.

:func:`describe` tells one event on its own. A :class:`Narrator` tells a game's
events in order and remembers what a line needs from the lines before it: the
call an answer answers (``S1(B) accepts the redeal``) and the seat that
accepted a raise (``TRUC accepted by team B``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from truc.v1 import cards_pb2, game_pb2

__all__ = [
    "FAMILY_RULE_SETS",
    "Narrator",
    "action_text",
    "call_name",
    "card_text",
    "describe",
    "is_family",
    "prompt_text",
    "rule_set_name",
    "seat_name",
    "team_name",
]

_RANKS: Final = ("", "1", "2", "3", "4", "5", "6", "7", "J", "N", "K", "8", "9", "T", "Q", "A")
"""By proto rank: the Spanish pack's 1-7 J N K, the piquet pack's 8 9 T Q A."""
_SUITS: Final = ("", "Sw⚔", "Cl♣", "Co☀", "Cu♥", "He♥", "Di♦", "Sp♠")
"""By proto suit: swords, clubs (both packs), coins, cups, hearts, diamonds, spades."""

_FRENCH: Final = game_pb2.RULE_SET_FRENCH_TRUC
_SACKSON: Final = game_pb2.RULE_SET_SACKSON_TRUC
_PARTNERSHIP: Final = game_pb2.RULE_SET_PARTNERSHIP_TRUC
_CATALAN: Final = game_pb2.RULE_SET_CATALAN_TRUC
FAMILY_RULE_SETS: Final = frozenset((_FRENCH, _SACKSON, _PARTNERSHIP, _CATALAN))
"""The rule sets of variants.md (every one but Truc y Flou)."""


def is_family(rule_set: int) -> bool:
    """A variants.md rule set (proto number), not Truc y Flou."""
    return rule_set in FAMILY_RULE_SETS


def rule_set_name(rule_set: int) -> str:
    """``french_truc``; ``truc_y_flou`` for UNSPECIFIED."""
    if rule_set == game_pb2.RULE_SET_UNSPECIFIED:
        rule_set = game_pb2.RULE_SET_TRUC_Y_FLOU
    name = game_pb2.RuleSet.Name(rule_set)  # type: ignore[arg-type]
    return name.removeprefix("RULE_SET_").lower()


def seat_name(seat: int) -> str:
    return f"S{seat}({'AB'[seat % 2]})"


def card_text(card: cards_pb2.Card) -> str:
    rank = _RANKS[card.rank] if 0 <= card.rank < len(_RANKS) else "?"
    suit = _SUITS[card.suit] if 0 <= card.suit < len(_SUITS) else "?"
    return rank + suit


def _cards(cards: object) -> str:
    return " ".join(card_text(c) for c in cards)  # type: ignore[attr-defined]


def call_name(call: int) -> str:
    """A call as the rules name it: ``TRUC``, ``DUS_DE_MES``, ``MON_RESTE``."""
    return game_pb2.Call.Name(call).removeprefix("CALL_")  # type: ignore[arg-type]


def _signal_name(signal: int) -> str:
    return game_pb2.Signal.Name(signal).removeprefix("SIGNAL_")  # type: ignore[arg-type]


def _directive_name(directive: int) -> str:
    return game_pb2.Directive.Name(directive).removeprefix("DIRECTIVE_")  # type: ignore[arg-type]


def team_name(team: int) -> str:
    """``A``, ``B``, or ``-`` for TEAM_UNSPECIFIED."""
    return "A" if team == game_pb2.TEAM_A else "B" if team == game_pb2.TEAM_B else "-"


def _raise_words(rule_set: int) -> str:
    """What a RAISE says: "two more?" (+2, V2.3), "double?" in sackson_truc (V3)."""
    return '"double?"' if rule_set == _SACKSON else '"two more?"'


_SIGNAL_WORDS: Final[dict[int, str]] = {
    game_pb2.SIGNAL_SEVEN: "a smile: I hold a 7",
    game_pb2.SIGNAL_EIGHT: "a wink: I hold an 8",
    game_pb2.SIGNAL_ACE: "a shrug: I hold an ace",
    game_pb2.SIGNAL_TRES: "I hold a 3",
    game_pb2.SIGNAL_DUS: "I hold a 2",
    game_pb2.SIGNAL_AS: "I hold an ace",
}
"""The family's signals in words (variants.md V4.5, V5.4)."""
_INSTRUCTION_WORDS: Final[dict[int, str]] = {
    game_pb2.DIRECTIVE_PLAY_SEVEN: "play a 7 next, if you hold one",
    game_pb2.DIRECTIVE_PLAY_LOW: "play one of your lowest cards next",
    game_pb2.DIRECTIVE_LEAVE_IT_TO_ME: "leave it to me: play one of your lowest cards next",
}
"""partnership_truc's binding instructions in words (V4.5)."""


# --------------------------------------------------------------------------- prompts

_PROMPTS: Final[dict[int, tuple[str, str]]] = {
    game_pb2.PROMPT_TURN: ("plays (or declares, or calls truc)", "play (or declare, or call truc)"),
    game_pb2.PROMPT_EMBIT_POLL: ("answers the embit", "answer the embit"),
    game_pb2.PROMPT_EMBIT_ANSWER: ("answers the embit raise", "answer the embit raise"),
    game_pb2.PROMPT_FLOR_POLL: ("answers the flor", "answer the flor"),
    game_pb2.PROMPT_FLOR_DECLARER: ("answers the flor challenge", "answer the flor challenge"),
    game_pb2.PROMPT_FLOR_CHALLENGER: ("answers the flor declarer", "answer the flor declarer"),
    game_pb2.PROMPT_TRUC_ANSWER: ("answers the truc call", "answer the truc call"),
    game_pb2.PROMPT_RAISE_ANSWER: ("answers the raise", "answer the raise"),
    game_pb2.PROMPT_MON_RESTE_ANSWER: ("answers MON_RESTE", "answer MON_RESTE"),
    game_pb2.PROMPT_REDEAL_ANSWER: ("answers the redeal proposal", "answer the redeal proposal"),
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
    elif is_family(view.rule_set) and view.prompt == game_pb2.PROMPT_TURN:
        pair = ("plays (or raises)", "play (or raise)")
    elif is_family(view.rule_set) and view.prompt == game_pb2.PROMPT_RAISE_ANSWER:
        name = call_name(view.truc_call.call) if view.truc_call.call else "raise"
        pair = (f"answers the {name}", f"answer the {name}")
    else:
        pair = _PROMPTS.get(view.prompt, ("acts", "act"))
    return pair[1] if you else pair[0]


# --------------------------------------------------------------------------- actions


def action_text(action: game_pb2.Action, view: game_pb2.GameView | None = None) -> str:
    """A legal action in words: ``play 7Sw⚔``, ``call TRUC``, ``signal ESPASA``.

    With the ``view`` it is offered in, the calls, signals and instructions of
    the other rule sets say what they do: ``call RAISE ("two more?")``,
    ``call ACCEPT (the redeal)``, ``signal SEVEN (a smile: I hold a 7)``.
    """
    kind = action.WhichOneof("kind")
    family = view is not None and is_family(view.rule_set)
    if kind == "play_card":
        return f"play {card_text(action.play_card)}"
    if kind == "call":
        text = f"call {call_name(action.call)}"
        if view is not None and family:
            words = _family_call_words(action.call, view)
            if words:
                text += f" ({words})"
        return text
    if kind == "signal":
        text = f"signal {_signal_name(action.signal)}"
        said = _SIGNAL_WORDS.get(action.signal) if family else None
        return f"{text} ({said})" if said else text
    if kind == "directive":
        name = _directive_name(action.directive)
        if view is not None and view.rule_set == _PARTNERSHIP:
            return f"instruct {name} ({_INSTRUCTION_WORDS.get(action.directive, 'binding')})"
        return f"direct {name}"
    if kind == "choose_dealer":
        return f"name {seat_name(action.choose_dealer)} dealer"
    if kind == "cut_deck":
        return f"cut {action.cut_deck} cards"
    return "nothing"


def _family_call_words(call: int, view: game_pb2.GameView) -> str:
    prompt = view.prompt
    if call == game_pb2.CALL_RAISE:
        return _raise_words(view.rule_set)
    if call == game_pb2.CALL_MON_RESTE:
        if prompt == game_pb2.PROMPT_MON_RESTE_ANSWER:
            return "accept: this hand decides the game"
        return "my rest: this hand for the game"
    if call == game_pb2.CALL_PROPOSE_REDEAL:
        return "propose a redeal: new cards for both"
    if call == game_pb2.CALL_REFUSE:
        return "refuse the redeal: keep these cards"
    if call == game_pb2.CALL_ACCEPT:
        return "the redeal" if prompt == game_pb2.PROMPT_REDEAL_ANSWER else "play on"
    if call == game_pb2.CALL_FOLD:
        return "concede the hand" if prompt == game_pb2.PROMPT_TURN else "give up the hand"
    return ""


# --------------------------------------------------------------------------- events


def _shown(shown: object) -> str:
    parts = []
    for s in shown:  # type: ignore[attr-defined]
        if s.cards:
            value = s.value if s.has_declaration else f"high card {s.value}"
            parts.append(f"{seat_name(s.seat)} {value} [{_cards(s.cards)}]")
        else:
            parts.append(f"{seat_name(s.seat)} nothing")
    return " vs ".join(parts)


@dataclass(slots=True)
class _Pending:
    call: int
    caller: int


_RAISES: Final = frozenset(
    (
        game_pb2.CALL_RAISE,
        game_pb2.CALL_TRUC,
        game_pb2.CALL_RETRUC,
        game_pb2.CALL_MON_RESTE,
        game_pb2.CALL_PROPOSE_REDEAL,
    )
)
"""The family's calls that wait for an answer."""


class Narrator:
    """Tells a game's events in order, in the words of its rule set.

    ``rule_set`` is the game's (``GameView.rule_set``; UNSPECIFIED means Truc y
    Flou). The narrator remembers the call waiting for an answer and the seat
    that answered last, so an answer says what it answers and an accepted raise
    names the team that accepted it.
    """

    def __init__(self, rule_set: int = game_pb2.RULE_SET_UNSPECIFIED) -> None:
        self.rule_set = rule_set
        self._family = is_family(rule_set)
        self._pending: _Pending | None = None
        self._answered_by: int | None = None

    def describe(self, event: game_pb2.Event) -> str | None:
        """One line for the event, or None for events a reader need not see."""
        kind = event.WhichOneof("kind")
        if kind == "hand_started":
            self._pending = None
            self._answered_by = None
            return self._hand_started(event.hand_started)
        if kind == "called":
            return self._called(event.called)
        if kind == "stake_raised":
            return self._stake_raised(event.stake_raised)
        if self._family:
            line = self._family_event(event, kind)
            if line is not None:
                return line
        return _describe_common(event, kind)

    # ---- the lines that depend on the rule set or on earlier lines

    def _hand_started(self, started: game_pb2.HandStarted) -> str:
        dealer, eldest = seat_name(started.dealer), seat_name(started.eldest)
        if not self._family:
            label = "la belle" if started.belle else f"manche {started.manche}"
            return f"── hand {started.hand_number} ({label}): {dealer} deals, {eldest} leads"
        label = "the deciding game" if started.belle else f"game {started.manche}"
        line = f"── hand {started.hand_number} ({label}): {dealer} deals, {eldest} leads"
        if self.rule_set == _PARTNERSHIP:
            line += f"; governors {dealer} and {eldest}"
        return line

    def _called(self, called: game_pb2.Called) -> str:
        who, call = seat_name(called.seat), called.call
        self._answered_by = called.seat
        if not self._family:
            return f"{who}: {call_name(call)}"
        pending = self._pending
        if pending is None:
            if call in _RAISES:
                self._pending = _Pending(call, called.seat)
            if call == game_pb2.CALL_RAISE:
                return f"{who}: RAISE — {_raise_words(self.rule_set)}"
            if call == game_pb2.CALL_MON_RESTE:
                return f'{who}: MON_RESTE — "my rest": this hand for the game'
            if call == game_pb2.CALL_PROPOSE_REDEAL:
                return f"{who} proposes a redeal (PROPOSE_REDEAL)"
            if call == game_pb2.CALL_FOLD:
                return f"{who} concedes the hand (FOLD)"
            return f"{who}: {call_name(call)}"
        self._pending = None
        asked = f"{seat_name(pending.caller)}'s {call_name(pending.call)}"
        if pending.call == game_pb2.CALL_PROPOSE_REDEAL:
            if call == game_pb2.CALL_ACCEPT:
                return f"{who} accepts the redeal (ACCEPT): three new cards each"
            return f"{who} refuses the redeal (REFUSE): play goes on with these cards"
        if call == game_pb2.CALL_FOLD:
            return f"{who} folds (FOLD) to {asked}"
        if call == game_pb2.CALL_MON_RESTE:
            return f"{who} answers {asked} with MON_RESTE"
        return f"{who} accepts {asked} ({call_name(call)})"

    def _stake_raised(self, raised: game_pb2.StakeRaised) -> str:
        name = call_name(raised.call)
        by = self._answered_by
        team = f" by team {'AB'[by % 2]}" if by is not None else ""
        if self._family and raised.call == game_pb2.CALL_MON_RESTE:
            return "MON_RESTE answered with MON_RESTE: this hand decides the game"
        worth = "the manche" if raised.stake == 0 else f"{raised.stake} points"
        return f"{name} accepted{team}: the hand is worth {worth}"

    def _family_event(self, event: game_pb2.Event, kind: str | None) -> str | None:
        if kind == "trick_completed":
            done = event.trick_completed
            if done.winner == game_pb2.TEAM_UNSPECIFIED:
                return f"trick {done.trick} is spoiled: nobody wins it"
            return None
        if kind == "hand_ended":
            ended = event.hand_ended
            how = {
                game_pb2.HAND_END_TRICKS: "won on tricks",
                game_pb2.HAND_END_FOLD: "conceded",
                game_pb2.HAND_END_ALL_PARDES: "every trick spoiled: nobody scores",
                game_pb2.HAND_END_MANCHE_OVER: "the game is over",
            }.get(ended.how, "over")
            return f"hand {ended.hand_number} over ({how})"
        if kind == "manche_ended":
            ended_game = event.manche_ended
            return (
                f"══ game to team {team_name(ended_game.winner)}, "
                f"{ended_game.scores.team_a}-{ended_game.scores.team_b}; "
                f"games A {ended_game.manches.team_a} - B {ended_game.manches.team_b}"
            )
        if kind == "match_ended":
            ended_match = event.match_ended
            score = f"{ended_match.manches.team_a}-{ended_match.manches.team_b}"
            return f"══ team {team_name(ended_match.winner)} wins the match ({score} in games)"
        if kind == "signal_sent":
            sent = event.signal_sent
            to = "the governor" if self.rule_set == _PARTNERSHIP else "the team"
            words = _SIGNAL_WORDS.get(sent.signal)
            tail = f" ({words})" if words else ""
            return f"{seat_name(sent.seat)} signals {_signal_name(sent.signal)} to {to}{tail}"
        if kind == "directive_sent" and self.rule_set == _PARTNERSHIP:
            sent_directive = event.directive_sent
            words = _INSTRUCTION_WORDS.get(sent_directive.directive, "binding")
            return (
                f"{seat_name(sent_directive.seat)} instructs the partner: "
                f"{_directive_name(sent_directive.directive)} ({words})"
            )
        return None


def describe(event: game_pb2.Event, *, rule_set: int = game_pb2.RULE_SET_UNSPECIFIED) -> str | None:
    """One line for the event on its own (a :class:`Narrator` tells a game's
    events in order, answers with what they answer), or None for events a
    reader need not see."""
    return Narrator(rule_set).describe(event)


def _describe_common(event: game_pb2.Event, kind: str | None) -> str | None:
    """The lines every rule set tells alike (Truc y Flou's words)."""
    if kind == "draw_card":
        draw_card = event.draw_card
        return f"{seat_name(draw_card.seat)} draws {card_text(draw_card.card)} for the first deal"
    if kind == "dealer_chosen":
        dealer_chosen = event.dealer_chosen
        who = seat_name(dealer_chosen.seat) if dealer_chosen.HasField("seat") else "the table"
        return f"{who} names {seat_name(dealer_chosen.dealer)} first dealer"
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
        return (
            f"{seat_name(signal_sent.seat)} signals {_signal_name(signal_sent.signal)} to the team"
        )
    if kind == "directive_sent":
        directive_sent = event.directive_sent
        name = _directive_name(directive_sent.directive)
        return f"{seat_name(directive_sent.seat)} directs the team: {name}"
    if kind == "turn_timed_out":
        timed_out = event.turn_timed_out
        done = action_text(timed_out.action) if timed_out.HasField("action") else "nothing"
        return f"{seat_name(timed_out.seat)} ran out of time (acted for: {done})"
    return None
