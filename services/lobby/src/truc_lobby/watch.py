"""Ticket watchers: one pattern subscription per replica for every ticket channel."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict

from redis.asyncio import Redis
from redis.exceptions import RedisError

from truc_redis.pubsub import next_publication

from .store import CHANNEL_PREFIX

__all__ = ["TicketHub"]

log = logging.getLogger("truc.lobby.watch")


class TicketHub:
    """Wakes the local watchers of a ticket whenever it changes (on any replica)."""

    def __init__(self, redis: Redis) -> None:
        """``redis``: where to subscribe (on a Redis Cluster, a plain client of one
        node: :func:`truc_redis.connection.subscriber`)."""
        self._pubsub = redis.pubsub(ignore_subscribe_messages=True)
        self._waiters: dict[str, set[asyncio.Event]] = defaultdict(set)
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self._pubsub.psubscribe(CHANNEL_PREFIX + "*")
        self._task = asyncio.create_task(self._listen(), name="ticket-hub")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        with contextlib.suppress(RedisError):
            await self._pubsub.aclose()  # type: ignore[no-untyped-call]

    def register(self, ticket: str) -> asyncio.Event:
        event = asyncio.Event()
        self._waiters[ticket].add(event)
        return event

    def unregister(self, ticket: str, event: asyncio.Event) -> None:
        waiters = self._waiters.get(ticket)
        if waiters is not None:
            waiters.discard(event)
            if not waiters:
                del self._waiters[ticket]

    async def _listen(self) -> None:
        while True:
            published = await next_publication(
                self._pubsub, prefix=CHANNEL_PREFIX, log=log, listener="ticket hub"
            )
            if published is None:
                continue
            ticket, _ = published
            for event in self._waiters.get(ticket, ()):
                event.set()
