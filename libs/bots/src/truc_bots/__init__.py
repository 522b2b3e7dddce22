"""Bots for every rule set of the Truc family: policies that choose an action
from a seat's view, and a :class:`BotPlayer` (:mod:`truc_bots.player`) that
plays one seat of a game (of two, four or six seats) through the public game
API, over a ``Play`` session by default.

A policy sees only the :class:`~truc.v1.game_pb2.GameView` of its own seat (the
same message a human's client gets), never hidden information, and returns one
of ``view.legal_actions``. :class:`RandomPolicy` plays any rule set;
:class:`HeuristicPolicy` plays Truc y Flou by the rules of thumb below and the
rule sets of variants.md (``french_truc``, ``sackson_truc``,
``partnership_truc``, ``catalan_truc``) with :mod:`truc_bots.family`.
:mod:`truc_bots.arena` plays policies against each other in this process.
Section numbers (§) refer to shared/spec/rules.md.
"""

from __future__ import annotations

import random
from typing import Final, Protocol

from truc.v1 import cards_pb2, game_pb2

from truc_protocol.convert import card_to_proto, options_from_proto
from truc_rules.cards import DECK, Card
from truc_rules.truc_y_flou.options import RuleOptions
from truc_rules.truc_y_flou.ranking import BASTO, ESPASA, PeriqueTrickRank, trick_class

from .family import FamilyPolicy, card_strength, is_family, strength_table
from .player import BotError, BotPlayer, GameCalls, SessionCall, StreamCall

__all__ = [
    "BotError",
    "BotPlayer",
    "GameCalls",
    "HeuristicPolicy",
    "Policy",
    "RandomPolicy",
    "SessionCall",
    "StreamCall",
    "card_class",
    "card_strength",
    "class_table",
    "strength_table",
]


class Policy(Protocol):
    """Chooses the action of the seat to act from that seat's view."""

    def choose(self, view: game_pb2.GameView) -> game_pb2.Action:
        """One of ``view.legal_actions``; ValueError if the view offers no game action."""
        ...


# --------------------------------------------------------------------------- cards
#
# The §3.1 trick order is the rules library's (truc_rules.truc_y_flou.ranking.
# trick_class): the bots hold the very tables it returns, indexed by engine card,
# and turn a proto card into that index with the protocol's own conversion.

_NO_CARD: Final = 99
"""The class of a card that is none (lower than every class)."""


_PROTO_CARDS: Final = tuple(card_to_proto(card) for card in DECK)
_SPAN: Final = 1 + max(p.rank for p in _PROTO_CARDS)
"""Proto ranks are 1-10 (0: unspecified): a proto card's number is ``suit * _SPAN + rank``."""


def _engine_cards() -> tuple[int, ...]:
    """Engine card (0-39) by proto card number; -1 for a number that is no card."""
    table = [-1] * (_SPAN * (1 + max(p.suit for p in _PROTO_CARDS)))
    for card, proto in zip(DECK, _PROTO_CARDS, strict=True):
        table[proto.suit * _SPAN + proto.rank] = int(card)
    return tuple(table)


_ENGINE_CARD: Final = _engine_cards()


def _key(card: cards_pb2.Card) -> int:
    """The engine number of a proto card (the index into the class tables)."""
    return _ENGINE_CARD[card.suit * _SPAN + card.rank]


def _perique_option(number: game_pb2.PeriqueTrickRank.ValueType) -> PeriqueTrickRank:
    """The engine's option of a proto ``PeriqueTrickRank`` (UNSPECIFIED: the default)."""
    options = options_from_proto(game_pb2.RuleOptions(perique_trick_rank=number))
    assert isinstance(options, RuleOptions)  # no rule_set: Truc y Flou's options
    return options.perique_trick_rank


_CLASS_TABLES: Final[dict[int, tuple[int, ...]]] = {
    number: trick_class(_perique_option(number)) for number in game_pb2.PeriqueTrickRank.values()
}
"""The engine's trick-class table (by engine card, lower is stronger) for each
proto value of the ``perique_trick_rank`` option: the tuples ``trick_class`` returns."""


def class_table(perique: int = 0) -> tuple[int, ...]:
    """The trick class of every engine card for a ``PeriqueTrickRank`` value (lower is
    stronger): the very tuple of :func:`truc_rules.truc_y_flou.ranking.trick_class`."""
    return _CLASS_TABLES.get(perique, _CLASS_TABLES[0])


def card_class(card: cards_pb2.Card, perique: int = 0) -> int:
    """The trick class of a card (§3.1: 1 = Espasa ... 15 = périques; lower is stronger).

    ``perique`` is a ``PeriqueTrickRank`` value (UNSPECIFIED/LOWEST: 15,
    NATURAL: as the jack and knight they are, TOP: 0); 99 for a card that is none.
    """
    table = class_table(perique)
    number = card.suit * _SPAN + card.rank
    if not 0 < card.rank < _SPAN or not 0 <= number < len(_ENGINE_CARD):
        return _NO_CARD
    key = _ENGINE_CARD[number]
    return table[key] if key >= 0 else _NO_CARD


_ESPASA: Final = int(ESPASA)
_BASTO: Final = int(BASTO)
_SIGNAL_CARD: Final[dict[int, int]] = {
    game_pb2.SIGNAL_ESPASA: _ESPASA,
    game_pb2.SIGNAL_BASTO: _BASTO,
    game_pb2.SIGNAL_MANILLA_SW: int(Card.SW_7),
    game_pb2.SIGNAL_MANILLA_CO: int(Card.CO_7),
}
"""The signals that name one card (TRES and DUS name a rank), as engine cards."""

# --------------------------------------------------------------------------- actions

_GAME_KINDS: Final = frozenset(("play_card", "call", "choose_dealer", "cut_deck"))


def _game_actions(view: game_pb2.GameView) -> list[game_pb2.Action]:
    """The legal actions that are moves of the game (no signal, no directive)."""
    return [a for a in view.legal_actions if a.WhichOneof("kind") in _GAME_KINDS]


class RandomPolicy:
    """A uniformly random legal game action (never a signal or a directive)."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def choose(self, view: game_pb2.GameView) -> game_pb2.Action:
        actions = _game_actions(view)
        if not actions:
            raise ValueError("the view offers no game action (is it this seat's turn?)")
        return self._rng.choice(actions)


# Truc ladder (§6.1): rung 1 = TRUC ... 5 = BALOU_PARTIDO.
_LADDER: Final = (
    game_pb2.CALL_TRUC,
    game_pb2.CALL_RETRUC,
    game_pb2.CALL_BALOU_QUATRO,
    game_pb2.CALL_BALOU_SEIZ,
    game_pb2.CALL_BALOU_PARTIDO,
)
_RUNG: Final[dict[int, int]] = {call: i + 1 for i, call in enumerate(_LADDER)}
_ACCEPT_AT: Final = (0.0, 2.5, 3.5, 4.5, 5.5, 6.5)
"""Hand strength needed to accept a truc call of rung 1-5 (index 0 unused)."""
_CALL_MARGIN: Final = 1.5
"""A seat calls (or raises to) a rung with this much more than accepting it needs."""


def _weight(card_class: int) -> float:
    """A card's worth in the truc strength estimate."""
    if card_class <= 2:
        return 3.0
    if card_class <= 4:
        return 2.0
    if card_class == 5:
        return 1.5
    if card_class == 6:
        return 1.0
    if card_class <= 8:
        return 0.5
    return 0.0


class _Read:
    """What a decision needs from one view, gathered in one pass over it."""

    __slots__ = (
        "calls",
        "classes",
        "cuts",
        "dealers",
        "directive",
        "my_signals",
        "played",
        "plays",
        "seat",
        "signals",
        "team",
        "teammate_cards",
    )

    def __init__(self, view: game_pb2.GameView) -> None:
        self.seat = view.seat
        self.team = self.seat % 2
        self.classes = class_table(view.options.perique_trick_rank)
        self.plays: list[tuple[int, game_pb2.Action]] = []
        self.calls: dict[int, game_pb2.Action] = {}
        self.signals: list[tuple[int, game_pb2.Action]] = []
        self.dealers: list[game_pb2.Action] = []
        self.cuts: list[game_pb2.Action] = []
        for action in view.legal_actions:
            kind = action.WhichOneof("kind")
            if kind == "play_card":
                self.plays.append((self.classes[_key(action.play_card)], action))
            elif kind == "call":
                self.calls[action.call] = action
            elif kind == "signal":
                self.signals.append((action.signal, action))
            elif kind == "choose_dealer":
                self.dealers.append(action)
            elif kind == "cut_deck":
                self.cuts.append(action)
        self.played: set[int] = {_key(p.card) for t in view.tricks for p in t.plays}
        self.played.update(_key(p.card) for p in view.current_trick.plays)
        self.my_signals: set[int] = set()
        self.teammate_cards: dict[int, list[int]] = {}
        """Per teammate seat, the single cards it signalled and has not played yet."""
        self.directive = game_pb2.DIRECTIVE_UNSPECIFIED
        for message in view.signals:
            if message.seat % 2 != self.team:
                continue
            if message.WhichOneof("message") == "directive":
                self.directive = message.directive  # the latest one counts
            elif message.seat == self.seat:
                self.my_signals.add(message.signal)
            else:
                card = _SIGNAL_CARD.get(message.signal)
                if card is not None and card not in self.played:
                    self.teammate_cards.setdefault(message.seat, []).append(card)


class HeuristicPolicy:
    """A sensible player of every rule set: a view of a variants.md rule set is
    decided by :class:`truc_bots.family.FamilyPolicy` (its module docstring
    says how); Truc y Flou by the rules of thumb below.

    * Declarations: FLOR whenever it holds one; EMBIDE with an embit of 30 or
      more (MI_FALTA with 33 or more when its team is behind); poll answers by
      its own embit (CANTAR with 28+, a raise with 32+, else PASS; 31+ to
      answer MI_FALTA / RESTOU_Y_TROUCOU, which risk the manche); accepts an
      embit raise only with a strong embit; FLOR_TAMBIEN when it can,
      ALIMIDOU_CON_FLOR only with a strong flor.
    * Truc: a strength estimate (its high cards, the tricks won and lost, the
      unplayed Espasa/Basto/manillas its teammates signalled) decides calls
      and answers; it never folds holding both the Espasa and the Basto.
    * Cards: wins a trick with the cheapest card that beats it, otherwise
      throws its lowest card; leaves a trick its teammate already wins; keeps
      its high cards when a teammate still to play signalled the Espasa or
      the Basto; spoils (pardes) a trick it cannot win when that matters.
    * Signals each of its signalable cards once per hand, at its own turn, and
      follows its captain's PLAY_HIGH / PLAY_LOW / LET_THEM_TAKE_IT /
      STAY_QUIET / EMBIDE / TRUC directives where sensible.

    Every decision is one pass over the view's legal actions (plus the few
    cards on the table and the team's signals).
    """

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        self._family = FamilyPolicy(seed)

    def choose(self, view: game_pb2.GameView) -> game_pb2.Action:
        if is_family(view):
            return self._family.choose(view)
        read = _Read(view)
        if read.dealers:
            # §2.4: name the seat before ours as dealer, so that our seat is eldest.
            wanted = (read.seat - 1) % 6
            return next((a for a in read.dealers if a.choose_dealer == wanted), read.dealers[0])
        if read.cuts:
            return self._rng.choice(read.cuts)
        prompt = view.prompt
        if prompt == game_pb2.PROMPT_TURN:
            action = self._turn(view, read)
        elif prompt == game_pb2.PROMPT_TRUC_ANSWER:
            action = self._truc_answer(view, read)
        elif prompt == game_pb2.PROMPT_EMBIT_POLL:
            action = self._embit_poll(view, read)
        elif prompt == game_pb2.PROMPT_EMBIT_ANSWER:
            action = self._embit_answer(view, read)
        elif prompt == game_pb2.PROMPT_FLOR_POLL:
            action = self._flor_poll(view, read)
        elif prompt == game_pb2.PROMPT_FLOR_DECLARER:
            action = self._flor_declarer(view, read)
        elif prompt == game_pb2.PROMPT_FLOR_CHALLENGER:
            action = self._flor_challenger(view, read)
        else:
            action = None
        if action is not None:
            return action
        fallback = _game_actions(view)
        if not fallback:
            raise ValueError("the view offers no game action (is it this seat's turn?)")
        return fallback[0]

    # ---- helpers

    @staticmethod
    def _call(read: _Read, *calls: game_pb2.Call.ValueType) -> game_pb2.Action | None:
        """The first of ``calls`` that is legal."""
        for call in calls:
            action = read.calls.get(call)
            if action is not None:
                return action
        return None

    @staticmethod
    def _scores(view: game_pb2.GameView, read: _Read) -> tuple[int, int]:
        """(ours, theirs) in the current manche."""
        a, b = view.scores.team_a, view.scores.team_b
        return (a, b) if read.team == 0 else (b, a)

    @staticmethod
    def _strength(view: game_pb2.GameView, read: _Read) -> float:
        """How likely the team is to win the hand's tricks (a rough score)."""
        classes = read.classes
        score = sum(_weight(classes[_key(c)]) for c in view.hand)
        mine = game_pb2.TEAM_A if read.team == 0 else game_pb2.TEAM_B
        for trick in view.tricks:
            if trick.winner == mine:
                score += 2.0
            elif trick.winner != game_pb2.TEAM_UNSPECIFIED:
                score -= 2.0
        for cards in read.teammate_cards.values():
            for card in cards:
                score += 1.5 if card in (_ESPASA, _BASTO) else 1.0
        return score

    @staticmethod
    def _holds_espasa_and_basto(view: game_pb2.GameView) -> bool:
        keys = {_key(c) for c in view.hand}
        return _ESPASA in keys and _BASTO in keys

    # ---- the seat's own turn

    def _turn(self, view: game_pb2.GameView, read: _Read) -> game_pb2.Action | None:
        flor = read.calls.get(game_pb2.CALL_FLOR)
        if flor is not None and view.HasField("flor_value"):
            return flor
        for signal, action in read.signals:
            if signal not in read.my_signals:
                return action
        quiet = read.directive == game_pb2.DIRECTIVE_STAY_QUIET
        embit = self._open_embit(view, read, quiet)
        if embit is not None:
            return embit
        truc = self._call_truc(view, read, quiet)
        if truc is not None:
            return truc
        return self._play(view, read)

    def _open_embit(
        self, view: game_pb2.GameView, read: _Read, quiet: bool
    ) -> game_pb2.Action | None:
        if game_pb2.CALL_EMBIDE not in read.calls or not view.HasField("embit_value"):
            return None
        value = view.embit_value
        ours, theirs = self._scores(view, read)
        if value >= 33 and ours < theirs:
            mi_falta = read.calls.get(game_pb2.CALL_MI_FALTA)
            if mi_falta is not None:
                return mi_falta
        threshold = 30
        if quiet:
            threshold = 33
        elif read.directive == game_pb2.DIRECTIVE_EMBIDE:
            threshold = 28
        return read.calls[game_pb2.CALL_EMBIDE] if value >= threshold else None

    def _call_truc(
        self, view: game_pb2.GameView, read: _Read, quiet: bool
    ) -> game_pb2.Action | None:
        rung_call = next((c for c in read.calls if c in _RUNG), None)
        if rung_call is None:
            return None
        need = _ACCEPT_AT[_RUNG[rung_call]] + _CALL_MARGIN
        if quiet:
            need += 2.0
        elif read.directive == game_pb2.DIRECTIVE_TRUC:
            need -= 1.0
        if self._strength(view, read) >= need:
            return read.calls[rung_call]
        return None

    def _play(self, view: game_pb2.GameView, read: _Read) -> game_pb2.Action | None:
        if not read.plays:
            return None
        lowest = max(read.plays, key=lambda p: p[0])
        highest = min(read.plays, key=lambda p: p[0])
        directive = read.directive
        trick = view.current_trick
        plays = trick.plays
        mine = game_pb2.TEAM_A if read.team == 0 else game_pb2.TEAM_B
        must_win = bool(view.tricks) and not any(t.winner == mine for t in view.tricks)
        # Teammates still to play in this trick, and the best class of the top cards
        # (Espasa, Basto) they signalled and still hold: theirs will take the trick.
        classes = read.classes
        after = [(trick.leader + i) % 6 for i in range(len(plays) + 1, 6)]
        backing = min(
            (
                classes[card]
                for seat in after
                if seat % 2 == read.team
                for card in read.teammate_cards.get(seat, ())
                if card in (_ESPASA, _BASTO)
            ),
            default=99,
        )
        if not plays:  # leading
            if backing < 99 or directive in (
                game_pb2.DIRECTIVE_PLAY_LOW,
                game_pb2.DIRECTIVE_LET_THEM_TAKE_IT,
            ):
                return lowest[1]
            if view.tricks or directive == game_pb2.DIRECTIVE_PLAY_HIGH:
                return highest[1]  # trick 2 or 3 decides the hand: lead strong
            return lowest[1]
        best = min(classes[_key(p.card)] for p in plays)
        teams = {p.seat % 2 for p in plays if classes[_key(p.card)] == best}
        if teams == {read.team}:
            return lowest[1]  # a teammate wins the trick: let it keep it
        opponents_after = any(seat % 2 != read.team for seat in after)
        if directive in (game_pb2.DIRECTIVE_PLAY_LOW, game_pb2.DIRECTIVE_LET_THEM_TAKE_IT) and (
            not must_win
        ):
            return lowest[1]
        beating = [p for p in read.plays if p[0] < best]
        if beating:
            cheapest = max(beating, key=lambda p: p[0])
            if backing < best and cheapest[0] <= 6:
                return lowest[1]  # don't waste a high card: the teammate's will win
            if directive == game_pb2.DIRECTIVE_PLAY_HIGH and opponents_after:
                return highest[1]
            return cheapest[1]
        if teams == {1 - read.team}:
            equal = next((p for p in read.plays if p[0] == best), None)
            if equal is not None and (must_win or not opponents_after):
                return equal[1]  # spoil the trick (pardes) rather than lose it
        return lowest[1]

    # ---- answers

    def _truc_answer(self, view: game_pb2.GameView, read: _Read) -> game_pb2.Action | None:
        rung = _RUNG.get(view.truc_call.call, 1)
        strength = self._strength(view, read)
        if rung < len(_LADDER):
            raise_call = read.calls.get(_LADDER[rung])
            if raise_call is not None and strength >= _ACCEPT_AT[rung + 1] + _CALL_MARGIN + 0.5:
                return raise_call
        if strength >= _ACCEPT_AT[rung] or self._holds_espasa_and_basto(view):
            return self._call(read, game_pb2.CALL_ACCEPT)
        return self._call(read, game_pb2.CALL_FOLD, game_pb2.CALL_ACCEPT)

    def _embit_poll(self, view: game_pb2.GameView, read: _Read) -> game_pb2.Action | None:
        value = view.embit_value if view.HasField("embit_value") else 0
        if view.embit.call != game_pb2.CALL_EMBIDE:
            # MI_FALTA or RESTOU_Y_TROUCOU: the manche is at stake.
            if value >= 31:
                return self._call(read, game_pb2.CALL_CANTAR, game_pb2.CALL_PASS)
            return self._call(read, game_pb2.CALL_PASS)
        if value >= 34:
            return self._call(read, game_pb2.CALL_DUS_DE_MES, game_pb2.CALL_CANTAR)
        if value >= 32:
            return self._call(read, game_pb2.CALL_U_AOUTE, game_pb2.CALL_CANTAR)
        if value >= 28:
            return self._call(read, game_pb2.CALL_CANTAR, game_pb2.CALL_PASS)
        return self._call(read, game_pb2.CALL_PASS)

    def _embit_answer(self, view: game_pb2.GameView, read: _Read) -> game_pb2.Action | None:
        value = view.embit_value if view.HasField("embit_value") else 0
        points = view.embit.raise_points
        if view.embit.challenge == game_pb2.CALL_RESTOU or points > 2:
            strong = value >= 32
        else:
            strong = value >= 31 or (points <= 1 and value >= 29)
        if strong:
            return self._call(read, game_pb2.CALL_ACCEPT)
        return self._call(read, game_pb2.CALL_FOLD, game_pb2.CALL_ACCEPT)

    def _flor_poll(self, view: game_pb2.GameView, read: _Read) -> game_pb2.Action | None:
        tambien = read.calls.get(game_pb2.CALL_FLOR_TAMBIEN)
        if tambien is not None:
            return tambien
        if view.HasField("flor_value") and view.flor_value >= 36:
            return self._call(read, game_pb2.CALL_ALIMIDOU_CON_FLOR, game_pb2.CALL_PASS)
        return self._call(read, game_pb2.CALL_PASS)

    def _flor_declarer(self, view: game_pb2.GameView, read: _Read) -> game_pb2.Action | None:
        value = view.flor_value if view.HasField("flor_value") else 0
        if value >= 39:
            return self._call(
                read, game_pb2.CALL_ALIBARESTOU_CON_FLOR, game_pb2.CALL_ALIMIDOU_CANTAR
            )
        if value >= 34:
            return self._call(read, game_pb2.CALL_ALIMIDOU_CANTAR)
        return self._call(read, game_pb2.CALL_FOLD)

    def _flor_challenger(self, view: game_pb2.GameView, read: _Read) -> game_pb2.Action | None:
        value = view.flor_value if view.HasField("flor_value") else 0
        answer = next(
            (
                f.declarer_answer
                for f in reversed(view.flors)
                if f.HasField("challenger") and f.challenger == read.seat
            ),
            game_pb2.CALL_ALIMIDOU_CANTAR,
        )
        need = 39 if answer == game_pb2.CALL_ALIBARESTOU_CON_FLOR else 36
        if value >= need:
            return self._call(read, game_pb2.CALL_ACCEPT)
        return self._call(read, game_pb2.CALL_FOLD, game_pb2.CALL_ACCEPT)
