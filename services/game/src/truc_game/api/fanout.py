"""The part of a version's view that all its watchers share, built once.

Every watcher of a game on this replica is handed the same event-log entry
(:mod:`truc_game.adapters.redis_feed`); the views of it differ only in the fields that
:func:`~truc_rules.registry.view_for` fills for the viewer (its hand, its legal
actions, its team's signals, its instruction, the events it may see). :class:`PublicViews`
keeps the rest, serialized, for the last versions watched, so each watcher
only adds its own fields (:func:`.convert.seat_view_from_public`).

Nothing hidden is kept here: :func:`.convert.public_view_to_proto` reads only
the fields every seat sees, whichever seat's view it is given.
"""

from __future__ import annotations

from typing import Final

from truc_game.names import game_name
from truc_game.service import SeatView
from truc_protocol.convert import public_view_to_proto

__all__ = ["PublicViews"]

_SIZE: Final = 1024
"""Versions kept: those being fanned out at once, about one per watched game.
A version evicted too early is only built again."""


class PublicViews:
    def __init__(self, size: int = _SIZE) -> None:
        self._size = size
        self._parts: dict[object, bytes] = {}

    def of(self, seat_view: SeatView) -> bytes:
        """The serialized public part of ``seat_view``'s view."""
        source = seat_view.source
        key = (seat_view.game_id, source, seat_view.meta)
        part = self._parts.get(key) if source is not None else None
        if part is None:
            part = public_view_to_proto(
                seat_view.view,
                name=game_name(seat_view.game_id),
                players=seat_view.meta.players,
                etag=seat_view.etag,
                deadline_ms=seat_view.deadline_ms,
                absent=seat_view.absent,
                display_names=seat_view.meta.display_names,
            ).SerializeToString()
            if source is not None:
                if len(self._parts) >= self._size:
                    del self._parts[next(iter(self._parts))]  # the oldest
                self._parts[key] = part
        return part
