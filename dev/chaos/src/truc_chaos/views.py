"""A short digest of a version as every seat sees it, to compare what a watcher
was shown with the version the store rebuilds.

The store keeps no version's state but the first and the current one: every
version is rebuilt by replaying the game's log (:mod:`truc_game.history`). The
public part of a view (:func:`truc_protocol.convert.public_view_to_proto`: all
but the viewer's own fields) is a function of the version's state alone, the same
for every seat and transport: a watcher's view of version *n* digests to the same
bytes as the replayed state of version *n* if and only if it showed that
version's public state (phase, seat to act, scores, tricks, calls...). Where the
deadline each record keeps tells two histories of one version number apart by
when they were written, this tells them apart by what they show.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Final

from truc.v1 import game_pb2

from truc_protocol.convert import public_view_to_proto
from truc_rules.registry import AnyState, view_for

__all__ = ["public_digest", "replayed_digest"]

_NOT_COMPARED: Final = (
    # The viewer's own fields (convert._seat_fields) and its events:
    "seat",
    "legal_actions",
    "legal_moves",
    "legal_messages",
    "hand",
    "dealt",
    "embit_value",
    "flor_value",
    "signals",
    "instruction",
    "events",
    # What the transport or the moment sets, not the version's state:
    "name",
    "etag",
    "deadline",
)


def public_digest(view: game_pb2.GameView) -> bytes:
    """The digest of ``view``'s public part (8 bytes)."""
    public = game_pb2.GameView()
    public.CopyFrom(view)
    for name in _NOT_COMPARED:
        public.ClearField(name)
    for seat in public.seats:
        seat.ClearField("absent")  # who the house plays for: the log's, not the state's
        seat.ClearField("display_name")  # the game's (set at CreateGame), not the version's
    return hashlib.blake2b(public.SerializeToString(deterministic=True), digest_size=8).digest()


def replayed_digest(state: AnyState, players: Sequence[str]) -> bytes:
    """The digest every seat's view of ``state`` has (:func:`public_digest`)."""
    view = view_for(state, 0)  # any seat's: the public part is the same for all
    message = public_view_to_proto(view, name="", players=players, etag="", deadline_ms=None)
    return public_digest(message)
