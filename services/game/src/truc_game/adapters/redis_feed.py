"""The version feed on Redis: one pub/sub connection per replica, whatever the number
of watchers (the :class:`~truc_game.ports.VersionFeed` port).

Every commit publishes the game's new version on the game's channel. The
:class:`WatchHub` of each replica subscribes (on its single pub/sub connection)
to the channels of the games its clients watch, fetches each new version from
the game's event log once, and hands it to every local watcher of that game.

A watcher first reads the log after the version it last saw (so a reconnecting
client misses nothing), then follows the hub, skipping versions it already
has (so it sees nothing twice), filling any gap from the log, and re-reading
the log when nothing arrived for a while (pub/sub messages can be lost when a
connection drops): the hub's listener tells the watchers of a game it has
heard nothing of for ``heal_seconds`` to do so (one clock for all of them,
rather than a timeout on every wait of every watcher).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from redis.asyncio import Redis
from redis.exceptions import RedisError

from truc_game.ports import Entry, GameStore
from truc_protocol.errors import Unavailable
from truc_redis.pubsub import next_publication

from . import redis_keys as keys

__all__ = ["WatchHub"]

log = logging.getLogger("truc.game.watch")

_CHANNEL_PREFIX = keys.channel("")


@dataclass(slots=True)
class _Feed:
    """The local watchers of one game and the versions fetched for them."""

    queues: set[asyncio.Queue[Entry | None]] = field(default_factory=set)
    """One per watcher; None in it: re-read the log (nothing was heard for a while)."""
    heard: float = 0.0
    """Event-loop time of the last version handed out (or of the last re-read asked)."""
    last: int = 0
    """The last version fetched from the log and handed out (0: none yet)."""
    wanted: int = 0
    """The newest version announced."""
    fetcher: asyncio.Task[None] | None = None


class WatchHub:
    def __init__(self, redis: Redis, store: GameStore, *, heal_seconds: float = 5.0) -> None:
        """``redis``: where to subscribe; on a Redis Cluster a plain client of any
        one node (every node gets every publication), see
        :func:`truc_redis.connection.subscriber`."""
        self._store = store
        self._heal_seconds = heal_seconds
        self._pubsub = redis.pubsub(ignore_subscribe_messages=True)
        self._feeds: dict[str, _Feed] = {}
        self._subscribed = asyncio.Event()
        self._lock = asyncio.Lock()
        self._listener: asyncio.Task[None] | None = None
        self._next_heal = 0.0

    @property
    def watchers(self) -> int:
        return sum(len(f.queues) for f in self._feeds.values())

    def start(self) -> None:
        self._listener = asyncio.create_task(self._listen(), name="watch-hub")

    async def stop(self) -> None:
        tasks = [t for t in (self._listener, *(f.fetcher for f in self._feeds.values())) if t]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, RedisError):
                await task
        with contextlib.suppress(RedisError):
            await self._pubsub.aclose()  # type: ignore[no-untyped-call]

    async def follow(self, game_id: str, after_version: int) -> AsyncIterator[Entry]:
        """Every version of the game after ``after_version``, in order, forever."""
        queue: asyncio.Queue[Entry | None] = asyncio.Queue()
        # One lock orders subscribing and unsubscribing, so a watcher arriving while
        # the last one leaves cannot end up unsubscribed.
        async with self._lock:
            feed = self._feeds.get(game_id)
            if feed is None:
                feed = self._feeds[game_id] = _Feed(heard=asyncio.get_running_loop().time())
                await self._pubsub.subscribe(keys.channel(game_id))
                self._subscribed.set()
            feed.queues.add(queue)
        last = after_version
        try:
            for entry in await self._store.entries(game_id, last):
                yield entry
                last = entry.version
            while True:
                handed = await queue.get()
                if handed is None:  # nothing heard of the game for a while
                    missed = await self._store.entries(game_id, last)
                else:
                    if handed.version <= last:
                        continue
                    missed = (
                        [handed]
                        if handed.version == last + 1
                        else await self._store.entries(game_id, last)
                    )
                for found in missed:
                    if found.version > last:
                        yield found
                        last = found.version
        finally:
            feed.queues.discard(queue)
            if not feed.queues:
                async with self._lock:
                    if not feed.queues and self._feeds.get(game_id) is feed:
                        del self._feeds[game_id]
                        if feed.fetcher is not None:
                            feed.fetcher.cancel()
                        with contextlib.suppress(RedisError):
                            await self._pubsub.unsubscribe(keys.channel(game_id))

    async def _listen(self) -> None:
        while True:
            self._heal()
            if not self._feeds:
                self._subscribed.clear()
                await self._subscribed.wait()
                continue
            published = await next_publication(
                self._pubsub, prefix=_CHANNEL_PREFIX, log=log, listener="watch hub"
            )
            if published is None:
                continue
            game_id, version = published
            feed = self._feeds.get(game_id)
            if feed is None:
                continue
            feed.wanted = max(feed.wanted, int(version))
            if feed.fetcher is None or feed.fetcher.done():
                feed.fetcher = asyncio.create_task(self._fetch(game_id, feed))

    def _heal(self) -> None:
        """Ask the watchers of every game heard of by nobody for ``heal_seconds``
        to re-read its log (checked at most every second; the listener wakes at
        least that often)."""
        now = asyncio.get_running_loop().time()
        if now < self._next_heal:
            return
        self._next_heal = now + min(1.0, self._heal_seconds)
        for feed in self._feeds.values():
            if now - feed.heard >= self._heal_seconds:
                feed.heard = now
                for queue in feed.queues:
                    queue.put_nowait(None)

    async def _fetch(self, game_id: str, feed: _Feed) -> None:
        """Read the announced versions once and hand them to every watcher."""
        try:
            while feed.last < feed.wanted:
                start = feed.last if feed.last else feed.wanted - 1
                entries = await self._store.entries(game_id, start)
                if not entries:
                    return
                for entry in entries:
                    for queue in feed.queues:
                        queue.put_nowait(entry)
                feed.last = entries[-1].version
                feed.heard = asyncio.get_running_loop().time()
        except (RedisError, Unavailable) as exc:
            log.warning("watch hub could not read %s: %s", game_id, exc)
