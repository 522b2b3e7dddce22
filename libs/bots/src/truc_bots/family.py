"""The heuristic player of the variants.md rule sets: ``french_truc``,
``sackson_truc``, ``partnership_truc`` and ``catalan_truc``.

It sees what any seat sees (its proto :class:`~truc.v1.game_pb2.GameView`) and
returns one of ``view.legal_actions``. Cards are ranked by the engine's own
trick order tables (:attr:`truc_rules.family.Variant.strengths`, chosen by the
view's rule set and ``trick_order`` option); a proto card is read in its game's
pack with the protocol's conversion (:func:`truc_protocol.convert.card_to_proto`).

How it decides (section numbers V… refer to shared/spec/variants.md):

* **How good is the hand?** A Monte Carlo estimate: the cards it has not seen
  (the pack less its hand and the cards played) are dealt at random to the
  other seats, as many as each holds (a partner's honest signal places a card
  of that rank in the partner's hand), and the rest of the hand is played out
  by every seat with the simple rules below, many times over. ``p`` is the
  share of those deals its side wins (a hand nobody wins counts half).
* **Cards.** At its turn it plays the card with the best estimate on the same
  sampled deals (the lowest of equally good ones); the play-outs lead with the
  highest card, beat the best card on the table with the cheapest card that
  does, leave a trick their partner holds, spoil a trick they cannot win, and
  otherwise throw their lowest card. An instruction of its governor (V4.5) is
  obeyed already: ``legal_actions`` lists only the cards it allows.
* **Raises** (``RAISE``, ``TRUC``/``RETRUC``): when ``p`` ≥ 0.6 and a won hand
  would bring more; also whenever a lost hand already loses the game and a win
  would bring more. **MON_RESTE** instead of a raise with ``p`` ≥ 0.8, or with
  ``p`` ≥ 0.25 when a lost hand already loses the game.
* **Answers** weigh the chances of winning the game: a position is worth
  ``their need / (our need + their need)``; it accepts a raise (or answers
  ``MON_RESTE`` with ``MON_RESTE``) when playing on at the higher stake is worth
  at least folding, with ``p`` lowered by 0.3 of caution (a raiser is likely
  strong: against the heuristic's own raises, less caution lost and more did
  not win more). In ``partnership_truc`` only governors are asked (V4.2).
* **Redeal** (V2.5): eldest proposes one with ``p`` < 0.35; the dealer accepts
  one with ``p`` < 0.5.
* **Never concedes** at its own turn: conceding gives the stake for sure,
  playing on only perhaps.
* **Signals**: each card rank it may signal, once per hand, at its own turn (a
  partner in ``partnership_truc``, anyone in four-seat ``catalan_truc``).
  Catalan advice from a partner is followed as in Truc y Flou: ``PLAY_LOW`` and
  ``LET_THEM_TAKE_IT`` make it throw its lowest card unless its side needs the
  trick, ``PLAY_HIGH`` its highest, ``STAY_QUIET`` keeps it from raising and
  ``TRUC`` lowers its raising threshold.

Every estimate is seeded by the policy's own ``random.Random``: a seeded
policy is deterministic.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Final

from truc.v1 import cards_pb2, game_pb2

from truc_protocol.convert import card_to_proto
from truc_rules.cards import Card, Rank
from truc_rules.family import FamilyOptions, Ladder, PartnerTie, Variant
from truc_rules.registry import FAMILY
from truc_rules.rule_set import RuleSet
from truc_rules.tricks import NOBODY, UNDECIDED, hand_decision

__all__ = [
    "FamilyPolicy",
    "Position",
    "Tables",
    "card_strength",
    "guess_hands",
    "is_family",
    "pick",
    "play_out",
    "position_of",
    "strength_table",
    "tables_for",
]

_GAME_KINDS: Final = frozenset(("play_card", "call", "choose_dealer", "cut_deck"))
_SPAN: Final = 1 + max(card_to_proto(c).rank for c in Card)
"""Proto ranks are 1-15 (0: unspecified): a proto card's number is ``suit * _SPAN + rank``."""
_FAMILY_RULE_SETS: Final = frozenset(
    (
        game_pb2.RULE_SET_FRENCH_TRUC,
        game_pb2.RULE_SET_SACKSON_TRUC,
        game_pb2.RULE_SET_PARTNERSHIP_TRUC,
        game_pb2.RULE_SET_CATALAN_TRUC,
    )
)


def is_family(view: game_pb2.GameView) -> bool:
    """The view is of a variants.md rule set (not Truc y Flou)."""
    return (view.rule_set or view.options.rule_set) in _FAMILY_RULE_SETS


def _number(card: cards_pb2.Card) -> int:
    return card.suit * _SPAN + card.rank


@dataclass(frozen=True, slots=True)
class Tables:
    """What the bots need of one rule set and trick order, built once."""

    options: FamilyOptions
    """The rule set's options with the view's trick order (the others' defaults)."""
    variant: Variant
    power: tuple[int, ...]
    """The engine's strength of every engine card (higher wins; -1: another pack's):
    the very tuple of :attr:`~truc_rules.family.Variant.strengths`."""
    by_proto: tuple[int, ...]
    """The strength of a proto card by its number, read in the rule set's pack
    (-1: no card of the pack)."""
    pool: tuple[int, ...]
    """The strength of every card of the pack (one entry per card)."""
    signal_strength: dict[int, int]
    """Proto signal -> the strength of the rank it tells of."""

    def strength(self, card: cards_pb2.Card) -> int:
        number = _number(card)
        return self.by_proto[number] if 0 <= number < len(self.by_proto) else -1


_TABLES: dict[tuple[int, int], Tables] = {}


def tables_for(view: game_pb2.GameView) -> Tables:
    """The tables of the view's rule set and ``trick_order`` (cached)."""
    opts = view.options
    key = (view.rule_set or opts.rule_set, opts.trick_order)
    found = _TABLES.get(key)
    if found is not None:
        return found
    if key[0] not in _FAMILY_RULE_SETS:
        raise ValueError("not a view of a variants.md rule set")
    rule_set = RuleSet(game_pb2.RuleSet.Name(key[0]).removeprefix("RULE_SET_").lower())
    variant = FAMILY[rule_set].variant
    values: dict[str, object] = {}
    if key[1] and "trick_order" in variant.option_names:
        values["trick_order"] = (
            game_pb2.TrickOrder.Name(key[1]).removeprefix("TRICK_ORDER_").lower()
        )
    options = variant.options_from_mapping(values)
    power = variant.strengths[options.trick_order]
    by_proto = [-1] * (_SPAN * (1 + max(card_to_proto(c).suit for c in Card)))
    for card in variant.deck.cards:
        by_proto[_number(card_to_proto(card))] = power[card]
    rank_power = {card.rank: power[card] for card in variant.deck.cards}
    signal_strength: dict[int, int] = {}
    for signal, rank in variant.signals.items():
        number = game_pb2.Signal.Value("SIGNAL_" + signal.name)
        signal_strength[number] = rank_power[Rank(rank)]
    tables = Tables(
        options=options,
        variant=variant,
        power=power,
        by_proto=tuple(by_proto),
        pool=tuple(power[c] for c in variant.deck.cards),
        signal_strength=signal_strength,
    )
    _TABLES[key] = tables
    return tables


def strength_table(view: game_pb2.GameView) -> tuple[int, ...]:
    """The engine's trick-order strengths (by engine card, higher wins) of the
    view's rule set and ``trick_order``: the tuple the engine itself ranks with."""
    return tables_for(view).power


def card_strength(card: cards_pb2.Card, view: game_pb2.GameView) -> int:
    """A proto card's strength in the view's game (higher wins; -1 for a card
    that is none of its pack)."""
    return tables_for(view).strength(card)


# --------------------------------------------------------------------------- play-outs


def _team(team: int) -> int | None:
    """Proto team -> engine team (None: nobody)."""
    if team == game_pb2.TEAM_A:
        return 0
    if team == game_pb2.TEAM_B:
        return 1
    return None


def pick(hand: list[int], best: int, mask: int, team: int) -> int:
    """The play-outs' card for a seat of ``team``, given the best strength on the
    table and which sides hold it (``mask``: bit 0 team A, bit 1 team B; 0 when
    the seat leads): lead the highest; leave a partner's trick; beat with the
    cheapest card that does; spoil; else throw the lowest."""
    if not mask:
        return max(hand)
    if mask == 1 << team:
        return min(hand)
    beating = 99
    for card in hand:
        if best < card < beating:
            beating = card
    if beating != 99:
        return beating
    if best in hand:
        return best
    return min(hand)


@dataclass(slots=True)
class Position:
    """The hand as the viewer knows it, ready to be played out."""

    seats: int
    me: int
    team: int
    tie: PartnerTie
    hand: list[int]
    sizes: list[int]
    winners: list[int | None]
    plays: list[tuple[int, int]]
    leader: int
    unseen: list[int]
    forced: dict[int, list[int]]
    """Per seat of the viewer's side, strengths it surely holds (its signals)."""
    wanted: int = 0
    """Unseen cards a guess deals to the other seats."""


def position_of(view: game_pb2.GameView, tables: Tables) -> Position:
    """The viewer's hand, the others' hand sizes, the tricks and the trick in
    progress as strengths; the cards it has not seen; its partners' signalled cards."""
    seats = view.seat_count or len(view.seats) or 2
    me = view.seat
    team = me % 2
    strength = tables.strength
    hand = [strength(c) for c in view.hand]
    sizes = [0] * seats
    for info in view.seats:
        if 0 <= info.seat < seats:
            sizes[info.seat] = info.hand_size
    sizes[me] = len(hand)
    winners = [_team(t.winner) for t in view.tricks]
    plays = [(p.seat, strength(p.card)) for p in view.current_trick.plays]
    played = [strength(p.card) for t in view.tricks for p in t.plays] + [s for _, s in plays]
    unseen = list(tables.pool)
    for s in (*hand, *played):
        if s in unseen:
            unseen.remove(s)
    # A partner's signal tells of a card it held; while it has played no card of
    # that rank since, it still holds one.
    partner_played: dict[int, list[int]] = {}
    for t in (*view.tricks, view.current_trick):
        for p in t.plays:
            partner_played.setdefault(p.seat, []).append(strength(p.card))
    forced: dict[int, list[int]] = {}
    for message in view.signals:
        seat = message.seat
        if seat == me or seat % 2 != team or message.WhichOneof("message") != "signal":
            continue
        rank = tables.signal_strength.get(message.signal)
        if rank is None or rank in partner_played.get(seat, ()) or rank not in unseen:
            continue
        held = forced.setdefault(seat, [])
        if rank not in held and len(held) < sizes[seat]:
            held.append(rank)
            unseen.remove(rank)
    others = [s for s in range(seats) if s != me]
    wanted = sum(sizes[s] - len(forced.get(s, ())) for s in others)
    return Position(
        wanted=min(wanted, len(unseen)),
        seats=seats,
        me=me,
        team=team,
        tie=tables.variant.partner_tie,
        hand=hand,
        sizes=sizes,
        winners=winners,
        plays=plays,
        leader=view.current_trick.leader,
        unseen=unseen,
        forced=forced,
    )


def guess_hands(position: Position, rng: random.Random) -> list[list[int]]:
    """One guess at every hand: the viewer's own, the others' from the unseen cards."""
    drawn = rng.sample(position.unseen, position.wanted)
    hands: list[list[int]] = []
    at = 0
    for seat in range(position.seats):
        if seat == position.me:
            hands.append(list(position.hand))
            continue
        forced = position.forced.get(seat, ())
        take = position.sizes[seat] - len(forced)
        hands.append([*forced, *drawn[at : at + take]])
        at += take
    return hands


def play_out(position: Position, hands: list[list[int]], first: int | None = None) -> float:
    """Play the hand out from the position with every seat on :func:`pick`
    (the seat to play starts with ``first`` if given): 1 if the viewer's side
    wins it, 0 if it loses, 0.5 if nobody does. ``hands`` is used up."""
    seats = position.seats
    first_played = position.tie == PartnerTie.FIRST_PLAYED
    winners = list(position.winners)
    decided = hand_decision(winners)
    leader = position.leader
    # The trick in progress: its best strength, which sides hold it (bits),
    # how many cards hold it, the first seat that played it, whether the leader did.
    best, mask, count, top, leader_top = -1, 0, 0, -1, False
    played = 0
    for seat, card in position.plays:
        played += 1
        if card > best:
            best, mask, count, top, leader_top = card, 1 << (seat % 2), 1, seat, seat == leader
        elif card == best:
            mask |= 1 << (seat % 2)
            count += 1
            leader_top = leader_top or seat == leader
    while decided == UNDECIDED:
        while played < seats:
            seat = (leader + played) % seats
            hand = hands[seat]
            if not hand:
                return 0.5  # a guess short of cards (cannot happen with a real view)
            if first is not None:
                card, first = first, None
            else:
                card = pick(hand, best, mask, seat % 2)
            hand.remove(card)
            played += 1
            if card > best:
                best, mask, count, top, leader_top = card, 1 << (seat % 2), 1, seat, seat == leader
            elif card == best:
                mask |= 1 << (seat % 2)
                count += 1
                leader_top = leader_top or seat == leader
        # V1.4: a top rank held by both sides spoils the trick; V4.4: partners'
        # tied top cards win for a side that led it, else spoil it; V6 (Catalan):
        # they win, and the first of them leads next.
        if mask == 3:
            winners.append(None)
        elif count == 1 or first_played:
            winners.append(top % 2)
            leader = top
        elif leader_top:
            winners.append(leader % 2)
        else:
            winners.append(None)
        best, mask, count, top, leader_top = -1, 0, 0, -1, False
        played = 0
        decided = hand_decision(winners)
        if len(winners) >= 3 and decided == UNDECIDED:  # pragma: no cover - §3.5 decides 3
            break
    if decided == NOBODY:
        return 0.5
    return 1.0 if decided == position.team else 0.0


# --------------------------------------------------------------------------- the policy


def _worth(ours: int, theirs: int) -> float:
    """How likely a side that needs ``ours`` points is to win the game against
    one that needs ``theirs`` (a rough race: the share of the other's need)."""
    if ours <= 0:
        return 1.0
    if theirs <= 0:
        return 0.0
    return theirs / (ours + theirs)


class FamilyPolicy:
    """The heuristic of the module docstring, for one seat (seeded). Its
    thresholds are class attributes: a subclass may tune them."""

    RAISE_AT: float = 0.6
    """Raise with at least this ``p``."""
    MON_RESTE_AT: float = 0.8
    """Call MON_RESTE with at least this ``p``..."""
    DESPERATE_MON_RESTE_AT: float = 0.25
    """... or this much when a lost hand loses the game anyway."""
    CAUTION: float = 0.3
    """What an answer takes off ``p`` (the raiser chose to raise)."""
    REDEAL_AT: float = 0.35
    """Eldest proposes a redeal below this ``p``."""
    ACCEPT_REDEAL_AT: float = 0.5
    """The dealer accepts a redeal below this ``p``."""
    SAMPLES: ClassVar[dict[int, int]] = {2: 32, 4: 24}
    """Deals guessed per estimate, by table size."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(f"truc-bots:family:{seed}")

    def choose(self, view: game_pb2.GameView) -> game_pb2.Action:
        action = self._decide(view)
        if action is not None:
            return action
        fallback = [a for a in view.legal_actions if a.WhichOneof("kind") in _GAME_KINDS]
        if not fallback:
            raise ValueError("the view offers no game action (is it this seat's turn?)")
        return fallback[0]

    # ---- reading the view

    def _decide(self, view: game_pb2.GameView) -> game_pb2.Action | None:
        tables = tables_for(view)
        calls: dict[int, game_pb2.Action] = {}
        plays: list[tuple[int, game_pb2.Action]] = []
        signals: list[game_pb2.Action] = []
        for action in view.legal_actions:
            kind = action.WhichOneof("kind")
            if kind == "play_card":
                plays.append((tables.strength(action.play_card), action))
            elif kind == "call":
                calls[action.call] = action
            elif kind == "signal":
                signals.append(action)
        prompt = view.prompt
        if prompt == game_pb2.PROMPT_TURN:
            sent = {m.signal for m in view.signals if m.seat == view.seat and m.HasField("signal")}
            for signal in signals:
                if signal.signal not in sent:
                    return signal
            return self._turn(view, tables, plays, calls)
        if prompt not in (
            game_pb2.PROMPT_RAISE_ANSWER,
            game_pb2.PROMPT_MON_RESTE_ANSWER,
            game_pb2.PROMPT_REDEAL_ANSWER,
        ):
            return None
        position = position_of(view, tables)
        p = self._estimate(position, ())[0]
        if prompt == game_pb2.PROMPT_REDEAL_ANSWER:
            wanted = game_pb2.CALL_ACCEPT if p < self.ACCEPT_REDEAL_AT else game_pb2.CALL_REFUSE
            return calls.get(wanted)
        ours, theirs = self._needs(view, tables, position.team)
        stake = view.stake
        fold_worth = _worth(ours, theirs - stake)
        if prompt == game_pb2.PROMPT_MON_RESTE_ANSWER:
            play_on = p - self.CAUTION >= fold_worth
            return calls.get(game_pb2.CALL_MON_RESTE if play_on else game_pb2.CALL_FOLD)
        raised = self._raised(tables.variant, stake)
        accept_worth = self._play_worth(p - self.CAUTION, raised, ours, theirs)
        answer = game_pb2.CALL_ACCEPT if accept_worth >= fold_worth else game_pb2.CALL_FOLD
        return calls.get(answer)

    @staticmethod
    def _needs(view: game_pb2.GameView, tables: Tables, team: int) -> tuple[int, int]:
        """(ours, theirs): the points each side still needs to win the game."""
        target = view.options.target_score or tables.options.target_score
        a, b = view.scores.team_a, view.scores.team_b
        mine, other = (a, b) if team == 0 else (b, a)
        return target - mine, target - other

    @staticmethod
    def _raised(variant: Variant, stake: int) -> int:
        """The stake a raise from ``stake`` proposes (V2.3, V3, V5.3)."""
        if variant.ladder == Ladder.DOUBLE:
            return stake * 2
        if variant.ladder == Ladder.PLUS_TWO:
            return 2 if stake == 1 else stake + 2
        return stake + 1

    @staticmethod
    def _play_worth(p: float, stake: int, ours: int, theirs: int) -> float:
        """What playing the hand out at ``stake`` is worth (chances of the game)."""
        p = min(1.0, max(0.0, p))
        return p * _worth(ours - stake, theirs) + (1 - p) * _worth(ours, theirs - stake)

    # ---- estimates

    def win_chance(self, view: game_pb2.GameView) -> float:
        """``p``: the share of sampled deals the viewer's side wins, the hand
        played out by :func:`pick` from the view's position."""
        return self._estimate(position_of(view, tables_for(view)), ())[0]

    def _estimate(self, position: Position, candidates: Sequence[int]) -> list[float]:
        """``p`` with the seat to play starting with each candidate strength (or,
        without candidates, one ``p`` for the hand played out by the rules)."""
        samples = self.SAMPLES.get(position.seats, 32)
        firsts: Sequence[int | None] = candidates or (None,)
        totals = [0.0] * len(firsts)
        rng = self._rng
        for _ in range(samples):
            hands = guess_hands(position, rng)
            for i, first in enumerate(firsts):
                totals[i] += play_out(position, [list(h) for h in hands], first)
        return [t / samples for t in totals]

    # ---- the seat's own turn

    def _turn(
        self,
        view: game_pb2.GameView,
        tables: Tables,
        plays: list[tuple[int, game_pb2.Action]],
        calls: dict[int, game_pb2.Action],
    ) -> game_pb2.Action | None:
        if not plays:
            return None
        position = position_of(view, tables)
        directive = self._advice(view, position.team)
        distinct = sorted({s for s, _ in plays})
        if view.hand_decided or len(distinct) == 1:
            p = self._estimate(position, ())[0] if self._may_raise(calls) else 0.5
            best = distinct[0]
        else:
            values = self._estimate(position, distinct)
            top = max(values)
            best = next(s for s, v in zip(distinct, values, strict=True) if v >= top - 1e-9)
            p = top
            best = self._advised(position, distinct, best, directive)
        call = self._call(view, tables, calls, p=p, team=position.team, directive=directive)
        if call is not None:
            return call
        return next(a for s, a in plays if s == best)

    @staticmethod
    def _may_raise(calls: dict[int, game_pb2.Action]) -> bool:
        return any(
            c in calls
            for c in (
                game_pb2.CALL_RAISE,
                game_pb2.CALL_TRUC,
                game_pb2.CALL_RETRUC,
                game_pb2.CALL_MON_RESTE,
                game_pb2.CALL_PROPOSE_REDEAL,
            )
        )

    @staticmethod
    def _advice(view: game_pb2.GameView, team: int) -> int:
        """The latest advice of a partner this hand (catalan_truc's directives are
        advice; partnership_truc's bind and legal_actions already obeys them)."""
        if view.rule_set != game_pb2.RULE_SET_CATALAN_TRUC:
            return game_pb2.DIRECTIVE_UNSPECIFIED
        latest = game_pb2.DIRECTIVE_UNSPECIFIED
        for message in view.signals:
            mine = message.seat != view.seat and message.seat % 2 == team
            if mine and message.WhichOneof("message") == "directive":
                latest = message.directive
        return latest

    @staticmethod
    def _advised(
        position: Position,
        distinct: list[int],
        best: int,
        directive: int,
    ) -> int:
        """The card once a partner's advice is heard (catalan_truc)."""
        if directive in (game_pb2.DIRECTIVE_PLAY_LOW, game_pb2.DIRECTIVE_LET_THEM_TAKE_IT):
            needed = bool(position.winners) and position.team not in position.winners
            return best if needed else distinct[0]
        if directive == game_pb2.DIRECTIVE_PLAY_HIGH:
            return distinct[-1]
        return best

    def _call(
        self,
        view: game_pb2.GameView,
        tables: Tables,
        calls: dict[int, game_pb2.Action],
        *,
        p: float,
        team: int,
        directive: int,
    ) -> game_pb2.Action | None:
        """A redeal proposal, MON_RESTE or a raise, or None to play a card."""
        redeal = calls.get(game_pb2.CALL_PROPOSE_REDEAL)
        if redeal is not None and p < self.REDEAL_AT:
            return redeal
        if directive == game_pb2.DIRECTIVE_STAY_QUIET:
            return None
        ours, theirs = self._needs(view, tables, team)
        stake = view.stake
        raise_call = next(
            (
                calls[c]
                for c in (game_pb2.CALL_RAISE, game_pb2.CALL_TRUC, game_pb2.CALL_RETRUC)
                if c in calls
            ),
            None,
        )
        lost_anyway = theirs <= stake  # a lost hand loses the game already
        mon_reste = calls.get(game_pb2.CALL_MON_RESTE)
        if mon_reste is not None:
            raised = self._raised(tables.variant, stake)
            more = ours > raised  # the game is more than a raise would bring
            if more and (
                p >= self.MON_RESTE_AT or (lost_anyway and p >= self.DESPERATE_MON_RESTE_AT)
            ):
                return mon_reste
        if raise_call is None or ours <= stake:
            return None  # a won hand wins the game already: nothing to gain
        threshold = self.RAISE_AT - (0.1 if directive == game_pb2.DIRECTIVE_TRUC else 0.0)
        if p >= threshold or lost_anyway:
            return raise_call
        return None
