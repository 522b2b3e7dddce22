"""Open streams: how many WatchGame and Play streams a player, and a replica, hold.

A stream costs its replica memory and a place in the game's fan-out for as
long as it stays open, which may be the whole match, so what one caller holds
open is limited twice:

* **per player, across replicas** (``TRUC_MAX_STREAMS_PER_PLAYER``): each open
  stream holds a *lease* in the store (:class:`~truc_game.ports.StreamLeases`:
  in Redis a sorted set per player of stream ids scored by the lease's end).
  Opening one drops the player's leases that ran out and refuses the new one
  if the player still holds the limit. The replica holding a stream renews its
  lease every third of :attr:`OpenStreams.lease_ms`, all its streams in one
  pipeline, and removes it when the stream closes; the streams of a replica
  that died stop counting when their leases run out.
* **per replica, in all** (``TRUC_MAX_STREAMS``): an in-process
  :class:`~truc_service.limits.Concurrency`, exact and free.

Past either the open is refused RESOURCE_EXHAUSTED ``RATE_LIMITED``
(:func:`truc_protocol.errors.rate_limited`). Taking the lease costs no round
trip of its own: it runs beside the open's read of the game
(:meth:`OpenStreams.open`), and a stream refused by that read (no such game,
no seat) gives its lease back.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final, TypeVar

from truc_protocol.errors import ServiceError, rate_limited
from truc_service.limits import Concurrency

from .ports import StreamLeases

__all__ = ["OpenStreams", "Stream"]

log = logging.getLogger("truc.game")

_T = TypeVar("_T")

RETRY_AFTER_MS: Final = 1000
"""The wait a refused open is told to take (a stream of the player's may close
at any time)."""


@dataclass(frozen=True, slots=True)
class Stream:
    """One open stream of ``player`` (``id``: unique across replicas)."""

    player: str
    id: str


class OpenStreams:
    """The streams this replica holds open, within their limits (0: none)."""

    def __init__(
        self,
        leases: StreamLeases | None,
        *,
        per_player: int,
        total: int,
        lease_ms: int = 60_000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``leases``: where every replica's streams are counted per player
        (None, or ``per_player`` 0: not counted)."""
        self._leases = leases if per_player else None
        self._per_player = per_player
        self.lease_ms = lease_ms
        self._clock = clock
        self._replica = secrets.token_hex(6)
        self._numbers = itertools.count(1)
        self._open = Concurrency(
            per_key=0, total=total, what="streams", retry_after_ms=RETRY_AFTER_MS
        )
        self._held: dict[str, set[str]] = {}
        """Player -> the ids of its streams on this replica holding a lease."""

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    async def open(self, player: str, authorize: Awaitable[_T]) -> tuple[Stream, _T]:
        """A stream for ``player``, and what ``authorize`` (the open's read of
        the game and its checks) returns; the player's lease is taken while
        ``authorize`` runs. Raises what ``authorize`` raises (the lease given
        back), or RATE_LIMITED past a limit."""
        self._open.acquire("")
        stream = Stream(player, f"{self._replica}-{next(self._numbers)}")
        if self._leases is None:
            try:
                return stream, await authorize
            except BaseException:
                self._open.release("")
                raise
        now = self._now_ms()
        lease = asyncio.ensure_future(
            self._leases.take(
                player, stream.id, limit=self._per_player, now_ms=now, until_ms=now + self.lease_ms
            )
        )
        try:
            found = await authorize
        except BaseException:
            await self._give_back(stream, lease)
            raise
        try:
            taken = await lease
        except BaseException:
            self._open.release("")
            raise
        if not taken:
            self._open.release("")
            raise rate_limited(RETRY_AFTER_MS, f"streams open at once for player {player!r}")
        self._held.setdefault(player, set()).add(stream.id)
        return stream, found

    async def _give_back(self, stream: Stream, lease: asyncio.Future[bool]) -> None:
        """The lease of a stream whose open failed, dropped if it was taken."""
        self._open.release("")
        taken = False
        with contextlib.suppress(Exception):
            taken = await lease
        if taken and self._leases is not None:
            with contextlib.suppress(ServiceError):
                await self._leases.drop(stream.player, stream.id)

    async def close(self, stream: Stream) -> None:
        """The stream ended: its lease is dropped (if Redis cannot be reached,
        it runs out instead)."""
        self._open.release("")
        held = self._held.get(stream.player)
        if held is None or stream.id not in held:
            return
        held.discard(stream.id)
        if not held:
            del self._held[stream.player]
        if self._leases is not None:
            try:
                await self._leases.drop(stream.player, stream.id)
            except ServiceError as exc:
                log.debug("stream lease not dropped (it runs out): %s", exc)

    async def renew(self) -> None:
        """Move the leases of every stream held here to a lease from now."""
        if self._leases is not None and self._held:
            held = {player: tuple(ids) for player, ids in self._held.items()}
            await self._leases.renew(held, self._now_ms() + self.lease_ms)

    async def run(self) -> None:
        """Renew every third of a lease until cancelled (a failed renewal is
        logged and retried at the next)."""
        while True:
            await asyncio.sleep(self.lease_ms / 3000)
            try:
                await self.renew()
            except ServiceError as exc:
                log.warning("stream leases not renewed: %s", exc)
