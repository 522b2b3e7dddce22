"""What tells the rule sets of variants.md apart: a :class:`Variant` per rule
set, and the rule options they share (:class:`FamilyOptions`).

Everything a rule set of V2-V5 decides differently is a field here; the engine
(:mod:`truc_rules.family.engine`) reads these fields and nothing else, so each
rule of V1 is written once for all four rule sets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import Enum, StrEnum
from typing import Final

from truc_rules.actions import DIRECTIVE, SIGNAL, Call, Directive, SendDirective, SendSignal, Signal
from truc_rules.cards import Card, Deck, Rank
from truc_rules.errors import InvalidSetup
from truc_rules.rule_set import RuleSet

__all__ = [
    "MANCHES_TO_WIN",
    "FamilyOptions",
    "Ladder",
    "MessageRoles",
    "PartnerTie",
    "TrickOrder",
    "Variant",
]

_SIGNAL_CACHE: Final = 4096
MANCHES_TO_WIN: Final = 2
"""V1.5: a match is the best of three games."""


class TrickOrder(StrEnum):
    """Option ``trick_order`` of the piquet-pack rule sets (V2.1)."""

    SEVEN_EIGHT = "seven_eight"
    """7 8 A K Q J T 9, highest first (the default)."""
    SEVEN_ACE = "seven_ace"
    """The regional order 7 A K Q J T 9 8."""


class Ladder(Enum):
    """How raises take the stake up (V2.3, V3, V5.3)."""

    PLUS_TWO = "plus_two"
    """RAISE: 1 -> 2, then +2 (4, 6, 8, ...)."""
    DOUBLE = "double"
    """RAISE: doubles (1 -> 2 -> 4 -> 8 ...)."""
    TRUC_RETRUC = "truc_retruc"
    """TRUC: 1 -> 2, RETRUC: 2 -> 3, nothing above."""

    def raised(self, stake: int) -> int:
        """The stake a raise proposes from ``stake`` (V2.3, V3, V5.3)."""
        if self is Ladder.DOUBLE:
            return stake * 2
        if self is Ladder.PLUS_TWO:
            return 2 if stake == 1 else stake + 2
        return stake + 1


class PartnerTie(Enum):
    """A trick whose two highest cards were played by partners (V4.4, V6)."""

    LEADER_OR_SPOILED = "leader_or_spoiled"
    """partnership_truc: their side wins if one of them led (the leader leads
    next); otherwise the trick is spoiled."""
    FIRST_PLAYED = "first_played"
    """catalan_truc: their side wins; the first of the tied cards leads next."""


class MessageRoles(Enum):
    """Who may send signals and directives on the team channel (V4.5, V5.4)."""

    NONE = "none"
    """Two seats: no partner, every signal and directive is refused."""
    GOVERNOR_PARTNER = "governor_partner"
    """The governor's partner signals; the governor instructs (binding)."""
    ANYONE = "anyone"
    """Any player signals and sends directives (advice only)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FamilyOptions:
    """The rule options of a variants.md rule set (V6 lists them).

    Build them with :meth:`Variant.options` or :meth:`Variant.options_from_mapping`,
    which refuse the options a rule set does not have.
    """

    rule_set: RuleSet
    target_score: int
    """V1.5: points that win a game."""
    manches_to_win: int = MANCHES_TO_WIN
    """V1.5: games that win the match (2: best of three)."""
    play_out_all_tricks: bool = False
    """V1.4: keep playing the tricks once the hand is decided."""
    trick_order: TrickOrder | None = None
    """V2.1 (piquet-pack rule sets only)."""
    seats: int = 0
    """V5.2 (catalan_truc only): 4 or 2; fixed by the rule set otherwise."""

    def __post_init__(self) -> None:
        if not 1 <= self.target_score <= 250:
            raise InvalidSetup(f"target_score must be 1-250, not {self.target_score!r}")
        if not 1 <= self.manches_to_win <= 9:
            raise InvalidSetup(f"manches_to_win must be 1-9, not {self.manches_to_win!r}")


_OPTION_NAMES: Final = tuple(f.name for f in fields(FamilyOptions) if f.name != "rule_set")


@dataclass(frozen=True, slots=True, kw_only=True)
class Variant:
    """One rule set of variants.md, as the engine needs it."""

    rule_set: RuleSet
    deck: Deck
    orders: Mapping[TrickOrder | None, tuple[Rank, ...]]
    """Trick orders by option value, highest rank first; ``None`` when the rule
    set has no ``trick_order`` option."""
    seat_choices: tuple[int, ...]
    """The table sizes it may be played with, the default first."""
    target_score: int
    ladder: Ladder
    mon_reste: bool
    redeal: bool
    governors: bool
    partner_tie: PartnerTie
    signals: Mapping[Signal, Rank]
    """Each signal and the rank it tells of (empty: no signals)."""
    directives: tuple[Directive, ...]
    binding: bool
    """Directives are instructions the partner must obey (V4.5)."""
    option_names: frozenset[str] = field(default=frozenset())
    """The options beyond target_score, manches_to_win, play_out_all_tricks."""
    strengths: Mapping[TrickOrder | None, tuple[int, ...]] = field(init=False)
    """Per order, a card's strength (higher wins; -1 for another pack's card)."""
    roles: Mapping[int, MessageRoles] = field(init=False)
    """Per table size, who may use the team channel (:meth:`message_roles`)."""
    directive_actions: tuple[SendDirective, ...] = field(init=False)
    """The directives as actions, in order (built once)."""
    signal_actions: dict[tuple[Card, ...], tuple[SendSignal, ...]] = field(
        init=False, compare=False, repr=False
    )
    """The true signals of a hand, as actions: filled as hands are seen, emptied
    at :data:`_SIGNAL_CACHE` entries (a bounded cache)."""

    def __post_init__(self) -> None:
        table: dict[TrickOrder | None, tuple[int, ...]] = {}
        for order, ranks in self.orders.items():
            power = {rank: len(ranks) - i for i, rank in enumerate(ranks)}
            table[order] = tuple(power[c.rank] if c in self.deck else -1 for c in Card)
        object.__setattr__(self, "strengths", table)
        object.__setattr__(
            self, "roles", {seats: self.message_roles(seats) for seats in self.seat_choices}
        )
        object.__setattr__(self, "directive_actions", tuple(DIRECTIVE[d] for d in self.directives))
        object.__setattr__(self, "signal_actions", {})

    def true_signals(self, hand: tuple[Card, ...]) -> tuple[SendSignal, ...]:
        """The signals a hand may truly send (each about a card it holds)."""
        found = self.signal_actions.get(hand)
        if found is None:
            ranks = {card.rank for card in hand}
            found = tuple(SIGNAL[s] for s, rank in self.signals.items() if rank in ranks)
            if len(self.signal_actions) >= _SIGNAL_CACHE:
                self.signal_actions.clear()
            self.signal_actions[hand] = found
        return found

    @property
    def calls(self) -> tuple[Call, ...]:
        """Every call of the rule set."""
        raises = (Call.TRUC, Call.RETRUC) if self.ladder == Ladder.TRUC_RETRUC else (Call.RAISE,)
        extra = ((Call.MON_RESTE,) if self.mon_reste else ()) + (
            (Call.PROPOSE_REDEAL, Call.REFUSE) if self.redeal else ()
        )
        return (*raises, *extra, Call.ACCEPT, Call.FOLD)

    def message_roles(self, seats: int) -> MessageRoles:
        if seats == 2 or not (self.signals or self.directives):
            return MessageRoles.NONE
        return MessageRoles.GOVERNOR_PARTNER if self.governors else MessageRoles.ANYONE

    def options(self, **values: object) -> FamilyOptions:
        """The rule set's options: its defaults, with ``values`` (checked) over them."""
        return self.options_from_mapping(values)

    def options_from_mapping(self, values: Mapping[str, object]) -> FamilyOptions:
        """Options from JSON-like values (``{"trick_order": "seven_ace"}``); an
        option this rule set does not have is an :class:`InvalidSetup`."""
        known = {"target_score", "manches_to_win", "play_out_all_tricks", *self.option_names}
        kwargs: dict[str, object] = {
            "rule_set": self.rule_set,
            "target_score": self.target_score,
            "trick_order": TrickOrder.SEVEN_EIGHT if "trick_order" in known else None,
            "seats": self.seat_choices[0],
        }
        for name, raw in values.items():
            if name not in known:
                raise InvalidSetup(
                    f"{self.rule_set} has no rule option {name!r}; it has: {sorted(known)}"
                )
            kwargs[name] = self._convert(name, raw)
        return FamilyOptions(**kwargs)  # type: ignore[arg-type]

    def to_mapping(self, options: FamilyOptions) -> dict[str, object]:
        """The options as JSON-like values, only those this rule set has."""
        known = {"target_score", "manches_to_win", "play_out_all_tricks", *self.option_names}
        out: dict[str, object] = {}
        for name in _OPTION_NAMES:
            if name in known:
                value = getattr(options, name)
                out[name] = value.value if isinstance(value, StrEnum) else value
        return out

    def check(self, options: FamilyOptions) -> None:
        """Refuse options built for another rule set (a value it does not have)."""
        if options.rule_set != self.rule_set:
            raise InvalidSetup(f"options of {options.rule_set} are not {self.rule_set}'s")
        if options.trick_order not in self.orders:
            raise InvalidSetup(
                f"{self.rule_set}: trick_order {options.trick_order!r} is not one of its"
            )
        if options.seats not in self.seat_choices:
            raise InvalidSetup(
                f"{self.rule_set} is played by {' or '.join(map(str, self.seat_choices))} seats, "
                f"not {options.seats!r}"
            )

    def _convert(self, name: str, raw: object) -> object:
        if name == "trick_order":
            choices = {o.value: o for o in TrickOrder}
            if not isinstance(raw, str) or raw not in choices:
                raise InvalidSetup(f"trick_order must be one of {sorted(choices)}, not {raw!r}")
            return choices[raw]
        if name == "play_out_all_tricks":
            if not isinstance(raw, bool):
                raise InvalidSetup(f"{name} must be true or false, not {raw!r}")
            return raw
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise InvalidSetup(f"{name} must be an integer, not {raw!r}")
        if name == "seats" and raw not in self.seat_choices:
            raise InvalidSetup(
                f"seats must be {' or '.join(map(str, self.seat_choices))}, not {raw!r}"
            )
        return raw
