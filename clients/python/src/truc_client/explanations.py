"""What each choice does, in one line: the one home of the explanations that
terminal play shows for ``?`` (and any client may show beside a button).

:func:`explain` takes a legal action and the view it is offered in, and says
what it does and what it risks or scores *now* (``call TRUC``: "the hand is
worth 2 if they accept; if they fold your team scores 1 and the hand ends").
The words follow the rules of the view's rule set (docs/rule-sets.md; Truc y
Flou's numbers are the proto's comments on ``Call``); the signals and
directives reuse the narration's words (:data:`~truc_client.narration.SIGNAL_WORDS`,
:data:`~truc_client.narration.INSTRUCTION_WORDS`). :func:`draw_text` explains
why a captain names the first dealer.
"""

from __future__ import annotations

from typing import Final

from truc.v1 import cards_pb2, game_pb2

from truc_protocol.convert import rule_set_from_proto
from truc_rules.registry import FAMILY
from truc_rules.truc_y_flou.actions import TRUC_LADDER
from truc_rules.truc_y_flou.state import PARTIDO, STAKES

from .narration import (
    INSTRUCTION_WORDS,
    SIGNAL_WORDS,
    call_name,
    card_text,
    is_family,
    seat_name,
)

__all__ = ["draw_text", "explain"]

_WORTH: Final[dict[int, tuple[int, int]]] = {
    game_pb2.Call.Value("CALL_" + call.name): (
        STAKES[rung + 1] if rung + 1 < PARTIDO else 0,
        STAKES[rung],
    )
    for rung, call in enumerate(TRUC_LADDER)
}
"""Truc y Flou's ladder (§6.1), from the rules' own tables: each call's rung
raises the stake one level; the hand's worth if accepted (0: the manche) and
what the callers score if it is refused (the level below)."""

_EMBIT_WORDS: Final[dict[int, str]] = {
    game_pb2.CALL_EMBIDE: (
        "claim your team holds the better embit (a bluff is allowed): if all pass your team"
        " scores 1; a CANTAR shows the embits and the better scores 2; they may raise"
    ),
    game_pb2.CALL_MI_FALTA: (
        "the manche on the embit: if all pass your team scores 1; a CANTAR shows them and"
        " the better embit wins the manche (if yours is worse they score 1 + your rest)"
    ),
    game_pb2.CALL_RESTOU_Y_TROUCOU: (
        "the manche on the embit with a truc: if all pass your team scores 1 and the hand"
        " ends; a CANTAR shows them and the better embit wins the manche"
    ),
    game_pb2.CALL_FLOR: (
        "declare your flor (three cards of one suit): unopposed it scores 3; an opponent"
        " may answer FLOR_TAMBIEN or ALIMIDOU_CON_FLOR; a flor voids the hand's embit"
    ),
    game_pb2.CALL_CANTAR: (
        "challenge the embit to a showdown at its own value: the better embit scores it"
    ),
    game_pb2.CALL_U_AOUTE: (
        "raise the embit by 1: they accept (showdown, the better embit +2) or fold (you +2)"
    ),
    game_pb2.CALL_DUS_DE_MES: (
        "raise the embit by 2: they accept (showdown, the better embit +3) or fold (you +2)"
    ),
    game_pb2.CALL_DETZ_DE_MES: (
        "raise the embit by 10: they accept (showdown, the better embit +11) or fold (you +2)"
    ),
    game_pb2.CALL_RESTOU: (
        "raise the embit by your rest: accepted, the better embit scores 1 + that rest"
        " (you win the manche if yours is better); folded, you +2"
    ),
    game_pb2.CALL_FLOR_TAMBIEN: (
        "declare your own flor too: the two flors are compared at the end of the hand,"
        " the better scores 3"
    ),
    game_pb2.CALL_ALIMIDOU_CON_FLOR: (
        '"I have a better flor" (a bluff is allowed): they fold (you +3), play for 5,'
        " or play for the manche"
    ),
    game_pb2.CALL_ALIMIDOU_CANTAR: (
        "play the flors for 5: they fold (you +5) or accept (the better flor +5)"
    ),
    game_pb2.CALL_ALIBARESTOU_CON_FLOR: (
        "play the flors for the manche: they fold (you +5) or accept (the better flor wins"
        " the manche)"
    ),
}
"""Truc y Flou's declarations and their answers (§5), as game.proto's comments say."""

_DIRECTIVE_ADVICE: Final[dict[int, str]] = {
    game_pb2.DIRECTIVE_LET_THEM_TAKE_IT: "advise your team to let the opponents take this trick",
    game_pb2.DIRECTIVE_PLAY_HIGH: "advise your team to play a high card",
    game_pb2.DIRECTIVE_PLAY_LOW: "advise your team to play a low card",
    game_pb2.DIRECTIVE_EMBIDE: "advise your team to open the embit (EMBIDE)",
    game_pb2.DIRECTIVE_TRUC: "advise your team to call truc",
    game_pb2.DIRECTIVE_STAY_QUIET: "advise your team to make no call and declare nothing",
}
"""Truc y Flou's and Catalan Truc's directives: advice, seen by the team only."""

_SIGNAL_CARDS: Final[dict[int, str]] = {
    game_pb2.SIGNAL_ESPASA: "I hold the Espasa (1Sw)",
    game_pb2.SIGNAL_BASTO: "I hold the Basto (1Cl)",
    game_pb2.SIGNAL_MANILLA_SW: "I hold the manilla of swords (7Sw)",
    game_pb2.SIGNAL_MANILLA_CO: "I hold the manilla of coins (7Co)",
    game_pb2.SIGNAL_TRES: "I hold a 3",
    game_pb2.SIGNAL_DUS: "I hold a 2",
}


def _is(card: cards_pb2.Card, rank: int, suit: int) -> bool:
    return card.rank == rank and card.suit == suit


def _card(card: cards_pb2.Card, view: game_pb2.GameView) -> str:
    if is_family(view.rule_set):
        return (
            "put it on the trick: the highest card wins it; equal top cards of both sides spoil it"
        )
    if _is(card, cards_pb2.RANK_ONE, cards_pb2.SUIT_SWORDS):
        return "the Espasa, the top card: its trick cannot be lost, and scores +2 to the winner"
    if _is(card, cards_pb2.RANK_ONE, cards_pb2.SUIT_CLUBS):
        return "the Basto, second only to the Espasa: its trick's winner scores +1"
    return (
        "put it on the trick: the highest class wins it; if the top class holds cards of"
        " both teams the trick is pardes (nobody's)"
    )


def _worth(points: int) -> str:
    return "the manche" if points == 0 else f"{points} point{'s' if points != 1 else ''}"


def _truc_y_flou_call(call: int, view: game_pb2.GameView) -> str:
    prompt = view.prompt
    if call in _EMBIT_WORDS:
        return _EMBIT_WORDS[call]
    if call == game_pb2.CALL_PASS:
        return "do not challenge: when your whole team passes, the declaration stands"
    if call in _WORTH:
        worth, refused = _WORTH[call]
        if prompt == game_pb2.PROMPT_TRUC_ANSWER:
            return (
                f"raise back instead of accepting: the hand becomes worth {_worth(worth)}"
                f" if they accept; if they fold your team scores {refused}"
            )
        return (
            f"the hand becomes worth {_worth(worth)} if accepted; if they fold your team"
            f" scores {refused} and the hand ends"
        )
    pending = view.truc_call.call
    if call == game_pb2.CALL_ACCEPT:
        if prompt == game_pb2.PROMPT_TRUC_ANSWER and pending in _WORTH:
            return f"take the {call_name(pending)} on: play on for {_worth(_WORTH[pending][0])}"
        if prompt in (game_pb2.PROMPT_FLOR_DECLARER, game_pb2.PROMPT_FLOR_CHALLENGER):
            return "take the flor challenge on: the flors are compared"
        return "take the raise on: the embits are shown and the better one scores"
    if call == game_pb2.CALL_FOLD:
        if prompt == game_pb2.PROMPT_TRUC_ANSWER and pending in _WORTH:
            refused = _WORTH[pending][1]
            return f"refuse the {call_name(pending)}: the callers score {refused}, the hand ends"
        if prompt == game_pb2.PROMPT_EMBIT_ANSWER:
            return "refuse the embit raise: the raisers score 2"
        return "give the flor challenge up: the other side scores it"
    return f"the call {call_name(call)}"


def _next_stake(view: game_pb2.GameView) -> int:
    """What the stake becomes if a RAISE is accepted: the rule set's own ladder
    (V2.3: +2 from 2; V3: doubled)."""
    rules = FAMILY[rule_set_from_proto(view.rule_set, "rule_set")]
    return rules.variant.ladder.raised(view.stake or 1)


def _family_call(call: int, view: game_pb2.GameView) -> str:
    stake = view.stake or 1
    pending = view.truc_call.call
    if call == game_pb2.CALL_RAISE:
        return (
            f"raise the stake: the hand becomes worth {_next_stake(view)} if they accept;"
            f" if they fold you score {stake}"
        )
    if call == game_pb2.CALL_TRUC:
        return "the hand becomes worth 2 if they accept; if they fold you score 1"
    if call == game_pb2.CALL_RETRUC:
        return "the hand becomes worth 3 (the top) if they accept; if they fold you score 2"
    if call == game_pb2.CALL_MON_RESTE:
        if view.prompt == game_pb2.PROMPT_MON_RESTE_ANSWER:
            return "answer MON_RESTE with MON_RESTE: this hand decides the game"
        return (
            "my rest: the stake jumps to what your side still needs for the game; they fold"
            f" (you score {stake}) or answer MON_RESTE (this hand decides the game)"
        )
    if call == game_pb2.CALL_PROPOSE_REDEAL:
        return "ask for new cards for both: the dealer accepts (a redeal) or refuses"
    if call == game_pb2.CALL_REFUSE:
        return "refuse the redeal: play goes on with these cards"
    if call == game_pb2.CALL_ACCEPT:
        if view.prompt == game_pb2.PROMPT_REDEAL_ANSWER:
            return "accept the redeal: three new cards each"
        if pending == game_pb2.CALL_RAISE or view.prompt == game_pb2.PROMPT_RAISE_ANSWER:
            return "take the raise on: play on at the higher stake"
        return "take it on: play on at the new stake"
    if call == game_pb2.CALL_FOLD:
        if view.prompt == game_pb2.PROMPT_TURN:
            return f"concede the hand: the other side scores the stake ({stake})"
        return f"give up the hand: the caller's side scores the stake before the raise ({stake})"
    return f"the call {call_name(call)}"


def _signal(signal: int, view: game_pb2.GameView) -> str:
    said = SIGNAL_WORDS.get(signal) if is_family(view.rule_set) else _SIGNAL_CARDS.get(signal)
    to = "your governor" if view.rule_set == game_pb2.RULE_SET_PARTNERSHIP_TRUC else "your team"
    return f"tell {to} (only your team sees it; it must be true): {said or 'a signal'}"


def _directive(directive: int, view: game_pb2.GameView) -> str:
    if view.rule_set == game_pb2.RULE_SET_PARTNERSHIP_TRUC:
        words = INSTRUCTION_WORDS.get(directive, "binding")
        return f"instruct your partner (binding on their next card): {words}"
    return _DIRECTIVE_ADVICE.get(directive, "advise your team") + " (advice only; team only)"


def draw_text(view: game_pb2.GameView) -> str:
    """Why the seat to act names the first dealer (Truc y Flou's draw, §2.4)."""
    draws = " vs ".join(card_text(c) for c in view.draws[-2:])
    drawn = f" ({draws})" if draws else ""
    return (
        f"the captains drew for the first deal{drawn}: the lower card in trick order chooses"
        " the first dealer, any seat; the seat after the dealer (eldest) leads the first"
        " trick and wins ties of declarations, and the seat before the dealer cuts"
    )


def explain(action: game_pb2.Action, view: game_pb2.GameView) -> str:
    """What ``action`` does and what it risks or scores, offered in ``view``."""
    kind = action.WhichOneof("kind")
    if kind == "play_card":
        return _card(action.play_card, view)
    if kind == "call":
        if is_family(view.rule_set):
            return _family_call(action.call, view)
        return _truc_y_flou_call(action.call, view)
    if kind == "signal":
        return _signal(action.signal, view)
    if kind == "directive":
        return _directive(action.directive, view)
    if kind == "choose_dealer":
        dealer = action.choose_dealer
        seats = len(view.seats) or 6
        return (
            f"{seat_name(dealer)} deals the first hand: {seat_name((dealer + 1) % seats)}"
            f" (eldest) leads, {seat_name((dealer - 1) % seats)} cuts"
        )
    if kind == "cut_deck":
        return "cut the pack: this many cards go under before the deal (any number is fair)"
    return "nothing"
