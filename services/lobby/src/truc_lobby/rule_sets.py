"""The game a ticket waits for: its rule set, its table size, its options key.

A ticket's options are normalized once, when it is created: every default
written out, ``rule_set`` and ``seats`` included
(:func:`truc_protocol.convert.options_to_proto` of the engine's options), then
serialized deterministically. Those bytes are stored with the ticket and sent
to ``CreateGame``; their hex is the ticket's *options key*: tickets match only
tickets of the same key, so the lobby queues per rule set, per table size
(``catalan_truc`` with ``seats`` 2 apart from its 4 seats) and per every other
option.

A private ticket (``CreateTicketRequest.private``) queues under its options key
followed by :data:`PRIVATE_SUFFIX` (:meth:`TableRules.queue_key`): private
tickets match only private tickets of the same options; :func:`queued_rules`
reads a queue key back.

Tickets, claims and tables stored before the rule sets existed hold Truc y Flou
options without ``rule_set`` and ``seats``; :func:`stored_rules` normalizes them
again, so they queue, and are rated and recorded, with the Truc y Flou tickets
of today.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Final

from truc.v1 import game_pb2

from truc_protocol.convert import options_from_proto, options_to_proto, rule_set_from_proto
from truc_rules.registry import default_options, rule_set_of, seat_count
from truc_rules.rule_set import RuleSet

__all__ = ["PRIVATE_SUFFIX", "TableRules", "normalize", "queued_rules", "stored_rules"]

PRIVATE_SUFFIX: Final = "/private"
"""Ends the queue key of a private table's tickets (no hex digit: never an
options key's own end; a lobby older than private tables cannot read the key,
so it leaves such tickets to the replicas that can)."""


@dataclass(frozen=True, slots=True)
class TableRules:
    """What a ticket's options say about its table."""

    rule_set: RuleSet
    seat_count: int
    """6 (Truc y Flou), 4 (partnership and Catalan Truc) or 2 (the 1 v 1 rule sets)."""
    options: bytes
    """The normalized truc.v1.RuleOptions, serialized deterministically."""

    @property
    def team_size(self) -> int:
        """Players per team (and the largest party): 3, 2 or 1."""
        return self.seat_count // 2

    @property
    def key(self) -> str:
        """The options key: tickets match only tickets of the same key."""
        return self.options.hex()

    def queue_key(self, private: bool) -> str:
        """The key tickets of this table queue under: the options key, and
        :data:`PRIVATE_SUFFIX` for a private table."""
        return self.key + PRIVATE_SUFFIX if private else self.key

    def proto(self) -> game_pb2.RuleOptions:
        """The normalized options (a new message: callers may change it)."""
        return game_pb2.RuleOptions.FromString(self.options)


def normalize(options: game_pb2.RuleOptions) -> TableRules:
    """The table that ``options`` ask for, every default written out.

    Raises :class:`~truc_protocol.errors.InvalidArgument` ``BAD_REQUEST`` naming
    the option (``options.<field>: ...``) for a value out of bounds or an option
    the rule set does not have: the engine's options are the one definition.
    """
    engine = options_from_proto(options)
    data = options_to_proto(engine).SerializeToString(deterministic=True)
    return TableRules(rule_set_of(engine), seat_count(engine), data)


@functools.lru_cache(maxsize=1024)
def stored_rules(data: bytes) -> TableRules:
    """The table of options as a ticket or claim stored them (normalized by
    :func:`normalize`, or Truc y Flou options written before the rule sets
    existed, which are normalized again: the same key as today's).

    Raises ``InvalidArgument`` only for stored options no rule set accepts any
    more. Memoised: a queue holds few distinct options.
    """
    message = game_pb2.RuleOptions.FromString(data)
    if message.rule_set == game_pb2.RULE_SET_UNSPECIFIED:
        return normalize(message)
    rule_set = rule_set_from_proto(message.rule_set)
    seats = message.seats or seat_count(default_options(rule_set))
    return TableRules(rule_set, seats, data)


def queued_rules(queue_key: str) -> tuple[TableRules, bool]:
    """The table a queue key (:meth:`TableRules.queue_key`) names, and whether
    it is private. Raises ``ValueError`` for a key that is not one (not hex),
    ``InvalidArgument`` for options no rule set accepts any more."""
    private = queue_key.endswith(PRIVATE_SUFFIX)
    key = queue_key.removesuffix(PRIVATE_SUFFIX)
    return stored_rules(bytes.fromhex(key)), private
