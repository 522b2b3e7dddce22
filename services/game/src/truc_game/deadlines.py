"""Turn deadlines, in one place: the sweep every replica runs, and acting for a late seat.

Each game's deadline is kept in the store (:meth:`~truc_game.ports.GameStore.due`),
so any replica may act for a seat whose time ran out, and a restart loses none.
A replica :meth:`~truc_game.ports.GameStore.claim`\\ s a due deadline (moving it
``lease_ms`` ahead, so another replica retries if this one dies), then applies
the rules' deterministic default action of the game's rule set
(:func:`truc_rules.registry.default_action`: in Truc y Flou pass a poll, fold
a raise, play the lowest card; in the variants.md rule sets refuse a redeal, fold
a pending raise or mon reste, play the lowest legal card, obeying a binding
instruction) with one compare-and-set, preceded by a ``TurnTimedOut`` event. A
conflict means a player acted first: nothing to do.

That commit also counts one more turn in a row the seat missed: a seat that
missed ``TRUC_ABSENT_TURNS`` is *absent*, and its turns get a short deadline
(``TRUC_ABSENT_TURN_MS``), so this sweep plays them almost at once, until its
player acts again (:mod:`truc_game.absence`). A game whose players left ends in
minutes, not hours of turn timers.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final

from truc_protocol.errors import ServiceError
from truc_rules.events import TurnTimedOut
from truc_rules.registry import apply_action, decode_state, default_action
from truc_telemetry import logs

from . import metrics
from .ports import GameMissing, GameStore, VersionConflict
from .service import GameService, applied

__all__ = ["DeadlineSweeper"]

log = logging.getLogger("truc.game")

LEASE_MS: Final = 5000
"""How long a claimed deadline is this replica's before another may retry it."""
_CONFLICTS = metrics.CAS_CONFLICTS.labels("deadline")


class DeadlineSweeper:
    """Acts for the seats whose turn deadline has passed (any replica may)."""

    def __init__(self, service: GameService, store: GameStore, *, poll_ms: int) -> None:
        self._service = service
        self._store = store
        self._period = poll_ms / 1000

    async def run(self) -> None:
        """Sweep every ``poll_ms`` until cancelled; a failed sweep is logged and retried."""
        while True:
            await asyncio.sleep(self._period)
            try:
                await self.sweep()
            except ServiceError as exc:
                log.warning("deadline sweep failed: %s", exc)
            except Exception:
                log.exception("deadline sweep failed")
            logs.bind(game=None, seat=None)

    async def sweep(self) -> int:
        """One pass over the due deadlines; how many late seats were acted for."""
        now_ms = self._service.now_ms()
        acted = 0
        for game_id, due in await self._store.due(now_ms):
            logs.bind(game=game_id, seat=None)
            if await self._store.claim(game_id, due, now_ms + LEASE_MS):
                acted += await self.expire(game_id)
        return acted

    async def expire(self, game_id: str) -> bool:
        """Act for the seat whose deadline has passed; True if an action was applied."""
        try:
            snapshot = await self._store.read(game_id)
        except GameMissing:
            await self._store.forget_deadline(game_id)
            return False
        if snapshot.deadline_ms is None or snapshot.deadline_ms > self._service.now_ms():
            return False
        state = decode_state(snapshot.state)
        action = default_action(state)
        seat = state.to_act
        if action is None or seat is None:
            return False
        logs.bind(game=game_id, seat=seat)
        transition = apply_action(state, seat, action)
        events = (TurnTimedOut(seat, action), *transition.events)
        try:
            entry = await self._service.commit(
                game_id,
                snapshot.version,
                transition.state,
                events,
                seat=seat,
                action=action,
                timed_out=True,
                request="",
                deadline_ms=self._service.deadline_for(
                    transition.state, snapshot.meta.turn_seconds
                ),
                current_deadline_ms=snapshot.deadline_ms,
            )
        except VersionConflict:
            _CONFLICTS.inc()
            return False
        except GameMissing:
            return False
        log.info("turn timed out", extra={"kind": metrics.action_kind(action)})
        applied(action, "deadline", state, transition.state, entry.version)
        return True
