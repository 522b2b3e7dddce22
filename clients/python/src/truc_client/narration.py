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
accepted a raise (``TRUC accepted by team B (S3(B))``: the team opposite the
raise's caller, and the seat whose answer accepted it), the first deal's draw
(who drew the lower card and so names the first dealer), the cards of the
trick (so a bonus says ``Espasa`` or ``Basto``), and the hand's credits and the
running scores, which :meth:`Narrator.hand_summary` tells at the hand's end.
With ``names`` it writes a seat ``S3(B) José``.

Every server-provided string (a display name, a player id, an error's
message) goes through :func:`printable` before it is printed: the services
validate display names, but a terminal trusts no one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from truc.v1 import cards_pb2, game_pb2

from truc_protocol.convert import card_from_proto, options_from_proto
from truc_protocol.display_names import MAX_DISPLAY_NAME, display_name_problem
from truc_protocol.errors import InvalidArgument
from truc_rules.truc_y_flou.ranking import PeriqueTrickRank, trick_class

__all__ = [
    "FAMILY_RULE_SETS",
    "INSTRUCTION_WORDS",
    "SIGNAL_WORDS",
    "Narrator",
    "action_text",
    "call_name",
    "card_text",
    "describe",
    "directive_name",
    "is_family",
    "printable",
    "prompt_text",
    "rule_set_name",
    "score_text",
    "seat_label",
    "seat_name",
    "signal_name",
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


_REPLACEMENT: Final = "\ufffd"


def printable(text: str, *, limit: int = 200) -> str:
    """A server-provided string made safe to print: every character a display
    name may not hold (control, bidirectional, invisible format, line
    separators...: :func:`~truc_protocol.display_names.display_name_problem`'s
    rules, the one definition) becomes U+FFFD, and the text is cut at
    ``limit`` characters."""
    kept = "".join(c if display_name_problem(c) is None else _REPLACEMENT for c in text[:limit])
    return kept + ("…" if len(text) > limit else "")


def seat_label(seat: int, display_name: str = "", player: str = "", *, bot: bool = False) -> str:
    """What a seat's player is called: the display name, else the player id,
    else ``Bot {seat}`` for a bot (made :func:`printable`)."""
    if display_name:
        return printable(display_name, limit=MAX_DISPLAY_NAME)
    if bot or not player:
        return f"Bot {seat}"
    return printable(player, limit=40)


def score_text(score: game_pb2.Score, what: str = "points") -> str:
    """Always A first: ``points A 2 - B 3``."""
    return f"{what} A {score.team_a} - B {score.team_b}"


def card_text(card: cards_pb2.Card) -> str:
    rank = _RANKS[card.rank] if 0 <= card.rank < len(_RANKS) else "?"
    suit = _SUITS[card.suit] if 0 <= card.suit < len(_SUITS) else "?"
    return rank + suit


def _cards(cards: object) -> str:
    return " ".join(card_text(c) for c in cards)  # type: ignore[attr-defined]


def call_name(call: int) -> str:
    """A call as the rules name it: ``TRUC``, ``DUS_DE_MES``, ``MON_RESTE``."""
    return game_pb2.Call.Name(call).removeprefix("CALL_")  # type: ignore[arg-type]


def signal_name(signal: int) -> str:
    """``ESPASA``, ``SEVEN``."""
    return game_pb2.Signal.Name(signal).removeprefix("SIGNAL_")  # type: ignore[arg-type]


def directive_name(directive: int) -> str:
    """``PLAY_HIGH``, ``LEAVE_IT_TO_ME``."""
    return game_pb2.Directive.Name(directive).removeprefix("DIRECTIVE_")  # type: ignore[arg-type]


def team_name(team: int) -> str:
    """``A``, ``B``, or ``-`` for TEAM_UNSPECIFIED."""
    return "A" if team == game_pb2.TEAM_A else "B" if team == game_pb2.TEAM_B else "-"


def _raise_words(rule_set: int) -> str:
    """What a RAISE says: "two more?" (+2, V2.3), "double?" in sackson_truc (V3)."""
    return '"double?"' if rule_set == _SACKSON else '"two more?"'


SIGNAL_WORDS: Final[dict[int, str]] = {
    game_pb2.SIGNAL_SEVEN: "a smile: I hold a 7",
    game_pb2.SIGNAL_EIGHT: "a wink: I hold an 8",
    game_pb2.SIGNAL_ACE: "a shrug: I hold an ace",
    game_pb2.SIGNAL_TRES: "I hold a 3",
    game_pb2.SIGNAL_DUS: "I hold a 2",
    game_pb2.SIGNAL_AS: "I hold an ace",
}
"""The family's signals in words (variants.md V4.5, V5.4)."""
INSTRUCTION_WORDS: Final[dict[int, str]] = {
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
        text = f"signal {signal_name(action.signal)}"
        said = SIGNAL_WORDS.get(action.signal) if family else None
        return f"{text} ({said})" if said else text
    if kind == "directive":
        name = directive_name(action.directive)
        if view is not None and view.rule_set == _PARTNERSHIP:
            return f"instruct {name} ({INSTRUCTION_WORDS.get(action.directive, 'binding')})"
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
_STAKE_CALLS: Final = frozenset(
    (
        game_pb2.CALL_TRUC,
        game_pb2.CALL_RETRUC,
        game_pb2.CALL_BALOU_QUATRO,
        game_pb2.CALL_BALOU_SEIZ,
        game_pb2.CALL_BALOU_PARTIDO,
        game_pb2.CALL_RAISE,
        game_pb2.CALL_MON_RESTE,
    )
)
"""The calls a StakeRaised accepts (Truc y Flou's ladder, the family's raises)."""
_ACCEPTING: Final = frozenset((game_pb2.CALL_ACCEPT, game_pb2.CALL_MON_RESTE))
"""The answers that accept a raise (MON_RESTE answers MON_RESTE)."""

_REASONS: Final[dict[int, str]] = {
    game_pb2.CREDIT_REASON_EMBIT: "embit",
    game_pb2.CREDIT_REASON_FLOR: "flor",
    game_pb2.CREDIT_REASON_FLOR_TAMBIEN: "flor tambien",
    game_pb2.CREDIT_REASON_BONUS: "bonus",
    game_pb2.CREDIT_REASON_HAND: "hand",
    game_pb2.CREDIT_REASON_FOLD: "fold",
}
_BONUS_BY_POINTS: Final = {2: "Espasa", 1: "Basto", 3: "Espasa and Basto"}
"""§3.8: +2 for the Espasa (1Sw), +1 for the Basto (1Cl), one credit of +3 for both."""


def _is_card(card: cards_pb2.Card, rank: int, suit: int) -> bool:
    return card.rank == rank and card.suit == suit


def _bonus_name(cards: list[cards_pb2.Card], points: int) -> str:
    """Which bonus a trick's credit is: by the trick's cards, else by its points."""
    espasa = any(_is_card(c, cards_pb2.RANK_ONE, cards_pb2.SUIT_SWORDS) for c in cards)
    basto = any(_is_card(c, cards_pb2.RANK_ONE, cards_pb2.SUIT_CLUBS) for c in cards)
    if espasa and basto:
        return "Espasa and Basto"
    if espasa or basto:
        return "Espasa" if espasa else "Basto"
    return _BONUS_BY_POINTS.get(points, "bonus")


def _perique(options: game_pb2.RuleOptions | None) -> PeriqueTrickRank:
    """Where the options rank the périques in tricks (the draw compares cards so)."""
    if options is None:
        return PeriqueTrickRank.LOWEST
    try:
        engine = options_from_proto(options)
    except InvalidArgument:
        return PeriqueTrickRank.LOWEST
    rank = getattr(engine, "perique_trick_rank", PeriqueTrickRank.LOWEST)
    return rank if isinstance(rank, PeriqueTrickRank) else PeriqueTrickRank.LOWEST


_HAND_ENDS: Final[dict[int, str]] = {
    game_pb2.HAND_END_TRICKS: "on tricks",
    game_pb2.HAND_END_FOLD: "by a fold",
    game_pb2.HAND_END_MANCHE_OVER: "as the manche ended",
}


def _hand_result(ended: game_pb2.HandEnded, *, family: bool) -> str:
    """``to team B on tricks``, ``to nobody (all pardes)``."""
    if ended.how == game_pb2.HAND_END_ALL_PARDES:
        return "to nobody (every trick spoiled)" if family else "to nobody (all pardes)"
    how = _HAND_ENDS.get(ended.how, "")
    if family and ended.how == game_pb2.HAND_END_MANCHE_OVER:
        how = "as the game ended"
    if ended.winner == game_pb2.TEAM_UNSPECIFIED:
        return f"over {how}".rstrip()
    return f"to team {team_name(ended.winner)} {how}".rstrip()


@dataclass(slots=True)
class _Hand:
    """What the narrator saw of the current hand, for its summary."""

    number: int = 0
    credits: list[str] = field(default_factory=list)
    trick: list[tuple[int, cards_pb2.Card]] = field(default_factory=list)
    last_trick: list[cards_pb2.Card] = field(default_factory=list)
    manche_over: str = ""
    stake: str = ""
    result: str = ""


class Narrator:
    """Tells a game's events in order, in the words of its rule set.

    ``rule_set`` is the game's (``GameView.rule_set``; UNSPECIFIED means Truc y
    Flou); ``options`` its rule options (the draw compares cards in their trick
    order); ``names`` the seats' display names (``S3(B) José``; :func:`printable`
    is applied). The narrator remembers the call waiting for an answer and
    who called each raise, so an answer says what it answers and an accepted
    raise names the team that accepted it (the other side of the raise's
    caller) and the seat whose answer it was (:attr:`accepted_by`).

    ``compact`` (``make run``): a trick is one line (``trick 1: S2(A) 1Sw⚔ ·
    ... → team A (S2(A))``) instead of a line per card, credits are left to
    the hand's summary, and team messages (which the narrating seat sees for
    its own team only) are left out.
    """

    def __init__(
        self,
        rule_set: int = game_pb2.RULE_SET_UNSPECIFIED,
        *,
        names: Mapping[int, str] | None = None,
        options: game_pb2.RuleOptions | None = None,
        compact: bool = False,
    ) -> None:
        self.rule_set = rule_set
        self._family = is_family(rule_set)
        self.names: dict[int, str] = {
            seat: printable(name, limit=MAX_DISPLAY_NAME) for seat, name in (names or {}).items()
        }
        self.compact = compact
        self._perique = _perique(options)
        self._pending: _Pending | None = None
        self._raisers: dict[int, int] = {}
        self._last_call: tuple[int, int] | None = None
        self._draws: list[tuple[int, cards_pb2.Card]] = []
        self._hand = _Hand()
        self.accepted_by: str = ""
        """The last accepted raise of this hand in words (``team B (S3(B))``), or ""."""
        self.scores = game_pb2.Score()
        """The running points (after the last credit; a finished manche's final ones)."""
        self.manches = game_pb2.Score()
        """Manches (games) won so far."""

    def who(self, seat: int) -> str:
        """``S3(B)``, or ``S3(B) José`` with a name."""
        name = self.names.get(seat)
        return f"{seat_name(seat)} {name}" if name else seat_name(seat)

    def describe(self, event: game_pb2.Event) -> str | None:
        """One line for the event, or None for events a reader need not see."""
        kind = event.WhichOneof("kind")
        if kind == "hand_started":
            self._pending = None
            self._raisers.clear()
            self._last_call = None
            self.accepted_by = ""
            if self._hand.manche_over:
                self.scores = game_pb2.Score()
            self._hand = _Hand(number=event.hand_started.hand_number)
            return self._hand_started(event.hand_started)
        if kind == "called":
            return self._called(event.called)
        if self.compact and kind in ("signal_sent", "directive_sent"):
            return None  # team-only: the narrating seat would tell one team's, not the other's
        if kind == "stake_raised":
            return self._stake_raised(event.stake_raised)
        if kind == "draw_card":
            return self._draw(event.draw_card)
        if kind == "dealer_chosen":
            return self._dealer_chosen(event.dealer_chosen)
        if kind == "card_played":
            played = event.card_played
            self._hand.trick.append((played.seat, played.card))
            if self.compact:
                return None
            return f"{self.who(played.seat)} plays {card_text(played.card)}"
        if kind == "trick_completed":
            return self._trick_completed(event.trick_completed)
        if kind == "points_credited":
            return self._points_credited(event.points_credited)
        if kind == "manche_ended":
            ended = event.manche_ended
            self.scores.CopyFrom(ended.scores)
            self.manches.CopyFrom(ended.manches)
            games = "game" if self._family else "manche"
            self._hand.manche_over = f"{games} to team {team_name(ended.winner)}"
        if kind == "match_ended":
            self.manches.CopyFrom(event.match_ended.manches)
        if kind == "hand_ended":
            self._hand.number = event.hand_ended.hand_number
            self._hand.result = _hand_result(event.hand_ended, family=self._family)
        if self._family:
            line = self._family_event(event, kind)
            if line is not None:
                return line
        return self._common(event, kind)

    def hand_summary_lines(self) -> list[str]:
        """The hand just ended: its credits, the accepted stake, the scores in
        A-B order, the manche (game) if it ended."""
        hand = self._hand
        credits = ", ".join(hand.credits) if hand.credits else "no points"
        games = "games" if self._family else "manches"
        lines = [f"hand {hand.number} {hand.result or 'over'}: {credits}"]
        if hand.stake:
            lines.append(hand.stake)
        lines.append(f"{score_text(self.scores)} · {score_text(self.manches, games)}")
        if hand.manche_over:
            lines.append(hand.manche_over)
        return lines

    def hand_summary(self) -> str:
        """:meth:`hand_summary_lines` in one line (``hand 3 over: team B +3
        (hand) · TRUC accepted by team B (S3(B)) · points A 2 - B 5 · manches
        A 0 - B 1``)."""
        return " · ".join(self.hand_summary_lines())

    # ---- the lines that depend on the rule set or on earlier lines

    def _hand_started(self, started: game_pb2.HandStarted) -> str:
        dealer, eldest = self.who(started.dealer), self.who(started.eldest)
        if not self._family:
            label = "la belle" if started.belle else f"manche {started.manche}"
            return f"── hand {started.hand_number} ({label}): {dealer} deals, {eldest} leads"
        label = "the deciding game" if started.belle else f"game {started.manche}"
        line = f"── hand {started.hand_number} ({label}): {dealer} deals, {eldest} leads"
        if self.rule_set == _PARTNERSHIP:
            line += f"; governors {dealer} and {eldest}"
        return line

    def _draw(self, draw: game_pb2.DrawCard) -> str:
        line = f"{self.who(draw.seat)} draws {card_text(draw.card)} for the first deal"
        self._draws.append((draw.seat, draw.card))
        if len(self._draws) < 2:
            return line
        (first, first_card), (second, second_card) = self._draws[:2]
        self._draws.clear()
        classes = trick_class(self._perique)
        try:
            a = classes[card_from_proto(first_card, "draw", strict=True)]
            b = classes[card_from_proto(second_card, "draw", strict=True)]
        except InvalidArgument:  # not a Spanish card: nothing to compare
            return line
        if a == b:
            return f"{line}: the same class in trick order, the captains draw again"
        low = first if a > b else second  # a larger class number is a lower card
        return (
            f"{line}: {self.who(low)} drew the lower card in trick order,"
            f" so team {'AB'[low % 2]} chooses the first dealer"
        )

    def _dealer_chosen(self, chosen: game_pb2.DealerChosen) -> str:
        dealer = chosen.dealer
        if not chosen.HasField("seat"):
            return f"the table names {self.who(dealer)} first dealer"
        seats = 6
        eldest = (dealer + 1) % seats
        return (
            f"{self.who(chosen.seat)} names {self.who(dealer)} first dealer"
            f" ({self.who(eldest)}, after the dealer, leads the first trick)"
        )

    def _called(self, called: game_pb2.Called) -> str:
        who, call = self.who(called.seat), called.call
        self._last_call = (called.seat, call)
        answers_alike = self._family and self._pending is not None and self._pending.call == call
        if call in _STAKE_CALLS and not answers_alike:  # MON_RESTE answering MON_RESTE accepts
            self._raisers[call] = called.seat
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
        asked = f"{self.who(pending.caller)}'s {call_name(pending.call)}"
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
        caller = self._raisers.get(raised.call)
        answer = self._last_call
        if answer is not None and answer[1] not in _ACCEPTING:
            answer = None
        by = ""
        team = None
        if caller is not None:
            team = 1 - caller % 2  # the raise's caller's opponents accepted it
        elif answer is not None:  # the call itself came before this narrator started
            team = answer[0] % 2
        if team is not None:
            by = f"team {'AB'[team]}"
            if answer is not None and answer[0] % 2 == team:
                by += f" ({self.who(answer[0])})"
        self.accepted_by = by
        self._hand.stake = f"{name} accepted by {by}" if by else f"{name} accepted"
        if self._family and raised.call == game_pb2.CALL_MON_RESTE:
            return "MON_RESTE answered with MON_RESTE: this hand decides the game"
        worth = "the manche" if raised.stake == 0 else f"{raised.stake} points"
        return f"{name} accepted{' by ' + by if by else ''}: the hand is worth {worth}"

    def _trick_completed(self, done: game_pb2.TrickCompleted) -> str | None:
        plays, self._hand.trick = self._hand.trick, []
        self._hand.last_trick = [card for _, card in plays]
        spoiled = done.winner == game_pb2.TEAM_UNSPECIFIED
        if spoiled:
            result = "spoiled: nobody wins it" if self._family else "pardes"
        else:
            result = f"to team {team_name(done.winner)}"
            if done.HasField("winning_seat") and not (self._family and not self.compact):
                result += f" ({self.who(done.winning_seat)})"
        if self.compact:
            cards = " · ".join(f"{seat_name(s)} {card_text(c)}" for s, c in plays)
            return f"   trick {done.trick}: {cards} → {result}"
        if self._family and not spoiled:
            return None
        if spoiled:
            return f"trick {done.trick} is {result}"
        return f"trick {done.trick} {result}"

    def _points_credited(self, credited: game_pb2.PointsCredited) -> str | None:
        reason = _REASONS.get(credited.reason, "points")
        if credited.reason == game_pb2.CREDIT_REASON_BONUS:
            reason = f"bonus: {_bonus_name(self._hand.last_trick, credited.points)}"
        self.scores.CopyFrom(credited.scores)
        self._hand.credits.append(f"team {team_name(credited.team)} +{credited.points} ({reason})")
        if self.compact:
            return None
        return (
            f"team {team_name(credited.team)} +{credited.points} ({reason}) → "
            f"A {credited.scores.team_a} - B {credited.scores.team_b}"
        )

    def _family_event(self, event: game_pb2.Event, kind: str | None) -> str | None:
        if kind == "hand_ended":
            ended = event.hand_ended
            how = {
                game_pb2.HAND_END_TRICKS: "won on tricks",
                game_pb2.HAND_END_FOLD: "conceded",
                game_pb2.HAND_END_ALL_PARDES: "every trick spoiled: nobody scores",
                game_pb2.HAND_END_MANCHE_OVER: "the game is over",
            }.get(ended.how, "over")
            return self.hand_summary() if self.compact else f"hand {ended.hand_number} over ({how})"
        if kind == "manche_ended":
            ended_game = event.manche_ended
            return (
                f"══ game to team {team_name(ended_game.winner)}, "
                f"{score_text(ended_game.scores)}; {score_text(ended_game.manches, 'games')}"
            )
        if kind == "match_ended":
            ended_match = event.match_ended
            return (
                f"══ team {team_name(ended_match.winner)} wins the match, "
                f"{score_text(ended_match.manches, 'games')}"
            )
        if kind == "signal_sent":
            sent = event.signal_sent
            to = "the governor" if self.rule_set == _PARTNERSHIP else "the team"
            words = SIGNAL_WORDS.get(sent.signal)
            tail = f" ({words})" if words else ""
            return f"{self.who(sent.seat)} signals {signal_name(sent.signal)} to {to}{tail}"
        if kind == "directive_sent" and self.rule_set == _PARTNERSHIP:
            sent_directive = event.directive_sent
            words = INSTRUCTION_WORDS.get(sent_directive.directive, "binding")
            return (
                f"{self.who(sent_directive.seat)} instructs the partner: "
                f"{directive_name(sent_directive.directive)} ({words})"
            )
        return None

    def _shown(self, shown: object) -> str:
        parts = []
        for s in shown:  # type: ignore[attr-defined]
            if s.cards:
                value = s.value if s.has_declaration else f"high card {s.value}"
                parts.append(f"{self.who(s.seat)} {value} [{_cards(s.cards)}]")
            else:
                parts.append(f"{self.who(s.seat)} nothing")
        return " vs ".join(parts)

    def _common(self, event: game_pb2.Event, kind: str | None) -> str | None:
        """The lines every rule set tells alike (Truc y Flou's words)."""
        who = self.who
        if kind == "deck_cut":
            if self.compact:
                return None
            return f"{who(event.deck_cut.seat)} cuts the pack at {event.deck_cut.position}"
        if kind == "deals_exhausted":
            return "no deal left"
        if kind == "cards_dealt":
            return self.dealt_line(event.cards_dealt)
        if kind == "declaration_settled":
            settled = event.declaration_settled
            contest = game_pb2.Contest.Name(settled.contest).removeprefix("CONTEST_").lower()
            gain = (
                "wins the manche" if settled.wins_manche else f"+{settled.points} (credited later)"
            )
            versus = f": {self._shown(settled.shown)}" if settled.shown else ""
            return f"{contest} settled for team {team_name(settled.team)}, {gain}{versus}"
        if kind == "flor_showdown":
            showdown = event.flor_showdown
            shown = self._shown(showdown.shown)
            return f"flor tambien compared: {shown}; team {team_name(showdown.winner)} +3"
        if kind == "embit_voided":
            voided = event.embit_voided
            self._hand.credits.append(f"team {team_name(voided.team)}'s embit voided by a flor")
            lost = f"its +{voided.points}" if voided.points else "what it won"
            return f"a flor voids the embit (team {team_name(voided.team)} loses {lost})"
        if kind == "hand_ended":
            if self.compact:
                return self.hand_summary()
            how = game_pb2.HandEnd.Name(event.hand_ended.how).removeprefix("HAND_END_").lower()
            return f"hand {event.hand_ended.hand_number} over ({how.replace('_', ' ')})"
        if kind == "manche_ended":
            ended = event.manche_ended
            return (
                f"══ manche to team {team_name(ended.winner)}, "
                f"{score_text(ended.scores)}; {score_text(ended.manches, 'manches')}"
            )
        if kind == "match_ended":
            ended_match = event.match_ended
            return (
                f"══ team {team_name(ended_match.winner)} wins the match, "
                f"{score_text(ended_match.manches, 'manches')}"
            )
        if kind == "signal_sent":
            sent = event.signal_sent
            return f"{who(sent.seat)} signals {signal_name(sent.signal)} to the team"
        if kind == "directive_sent":
            directive_sent = event.directive_sent
            name = directive_name(directive_sent.directive)
            return f"{who(directive_sent.seat)} directs the team: {name}"
        if kind == "turn_timed_out":
            timed_out = event.turn_timed_out
            done = action_text(timed_out.action) if timed_out.HasField("action") else "nothing"
            return f"{who(timed_out.seat)} ran out of time (acted for: {done})"
        return None

    def dealt_line(self, dealt: game_pb2.CardsDealt) -> str:
        """``   S0(A) holds 2Co☀ KCu♥ 5Cu♥  (embit 25)``: one seat's cards as
        dealt (``truc demo`` and ``make run`` print every seat's, each from that
        seat's own view)."""
        extra = [f"flor {dealt.flor}"] if dealt.HasField("flor") else []
        extra += [f"embit {dealt.embit}"] if dealt.HasField("embit") else []
        tail = f"  ({', '.join(extra)})" if extra else ""
        return f"   {self.who(dealt.seat)} holds {_cards(dealt.cards)}{tail}"


def describe(event: game_pb2.Event, *, rule_set: int = game_pb2.RULE_SET_UNSPECIFIED) -> str | None:
    """One line for the event on its own (a :class:`Narrator` tells a game's
    events in order, answers with what they answer), or None for events a
    reader need not see."""
    return Narrator(rule_set).describe(event)
