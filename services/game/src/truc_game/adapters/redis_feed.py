"""The version feed on Redis: one pub/sub connection per replica, whatever the number
of watchers and sessions (the :class:`~truc_game.ports.VersionFeed` port).

Every commit publishes the game's new version itself (state, events, deadline,
request key: :mod:`.publication`) on the game's channel. The :class:`WatchHub`
of each replica subscribes (on its single pub/sub connection) to the channels
of the games its clients watch or play, and hands each version to every local
watcher and session of that game without reading it back; it keeps the newest
version of each such game (:meth:`WatchHub.latest`), which a session's action
is validated against. A version committed on this replica is handed out at
once (:meth:`WatchHub.announce`); its publication is then a repeat, skipped.

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
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

from redis.asyncio import Redis
from redis.exceptions import RedisError

from truc_game.ports import Entry, Listener
from truc_redis.pubsub import next_publication

from . import publication
from . import redis_keys as keys

__all__ = ["LogReader", "WatchHub"]

LogReader = Callable[[str, int], Awaitable[list[Entry]]]
"""The versions of a game after a version, rebuilt from the store
(:func:`truc_game.history.entries_after`)."""

log = logging.getLogger("truc.game.watch")

_CHANNEL_PREFIX = keys.channel("")


@dataclass(slots=True)
class _Feed:
    """The local watchers of one game and the versions fetched for them."""

    queues: set[asyncio.Queue[Entry | None]] = field(default_factory=set)
    """One per watcher; None in it: re-read the log (nothing was heard for a while)."""
    listeners: set[Listener] = field(default_factory=set)
    """The sessions of the game on this replica."""
    heard: float = 0.0
    """Event-loop time of the last version handed out (or of the last re-read asked)."""
    latest: Entry | None = None
    """The newest version handed out."""

    def hand(self, entry: Entry, now: float) -> None:
        if self.latest is not None and entry.version <= self.latest.version:
            return  # a repeat (our own commit's publication, or a re-read)
        self.latest = entry
        self.heard = now
        for queue in self.queues:
            queue.put_nowait(entry)
        for listener in self.listeners:
            listener.deliver(entry)

    def idle(self) -> bool:
        return not self.queues and not self.listeners


class WatchHub:
    def __init__(self, redis: Redis, read_log: LogReader, *, heal_seconds: float = 5.0) -> None:
        """``redis``: where to subscribe; on a Redis Cluster a plain client of any
        one node (every node gets every publication), see
        :func:`truc_redis.connection.subscriber`. ``read_log``: how a watcher
        catches up (after a gap, or when it resumes)."""
        self._read_log = read_log
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

    @property
    def sessions(self) -> int:
        return sum(len(f.listeners) for f in self._feeds.values())

    def latest(self, game_id: str) -> Entry | None:
        """The newest version of a followed game this replica has heard of."""
        feed = self._feeds.get(game_id)
        return None if feed is None else feed.latest

    def announce(self, game_id: str, entry: Entry) -> None:
        """A version committed on this replica: hand it out now."""
        feed = self._feeds.get(game_id)
        if feed is not None:
            feed.hand(entry, asyncio.get_running_loop().time())

    def end_sessions(self, error: Exception) -> int:
        """End every session of this replica with ``error`` (it is stopping: its
        clients resume on another replica at once); how many."""
        ended = 0
        for feed in self._feeds.values():
            for listener in list(feed.listeners):
                listener.fail(error)
                ended += 1
        return ended

    def rewound(self, game_id: str, entry: Entry) -> None:
        """The store is behind what this replica heard (Redis lost writes)."""
        feed = self._feeds.get(game_id)
        if feed is not None and feed.latest is not None and feed.latest.version > entry.version:
            log.warning(
                "game %s went back from version %d to %d",
                game_id,
                feed.latest.version,
                entry.version,
            )
            feed.latest = entry

    async def _join(self, game_id: str) -> _Feed:
        # One lock orders subscribing and unsubscribing, so a follower arriving
        # while the last one leaves cannot end up unsubscribed.
        async with self._lock:
            feed = self._feeds.get(game_id)
            if feed is None:
                feed = self._feeds[game_id] = _Feed(heard=asyncio.get_running_loop().time())
                await self._pubsub.subscribe(keys.channel(game_id))
                self._subscribed.set()
            return feed

    async def _leave(self, game_id: str, feed: _Feed) -> None:
        if not feed.idle():
            return
        async with self._lock:
            if feed.idle() and self._feeds.get(game_id) is feed:
                del self._feeds[game_id]
                with contextlib.suppress(RedisError):
                    await self._pubsub.unsubscribe(keys.channel(game_id))

    async def listen(self, game_id: str, listener: Listener) -> None:
        """Hand ``listener`` every version of the game heard from now on."""
        feed = await self._join(game_id)
        feed.listeners.add(listener)

    async def unlisten(self, game_id: str, listener: Listener) -> None:
        feed = self._feeds.get(game_id)
        if feed is not None:
            feed.listeners.discard(listener)
            await self._leave(game_id, feed)

    def start(self) -> None:
        self._listener = asyncio.create_task(self._listen(), name="watch-hub")

    async def stop(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, RedisError):
                await self._listener
        with contextlib.suppress(RedisError):
            await self._pubsub.aclose()  # type: ignore[no-untyped-call]

    async def follow(self, game_id: str, after_version: int) -> AsyncIterator[Entry]:
        """Every version of the game after ``after_version``, in order, forever."""
        queue: asyncio.Queue[Entry | None] = asyncio.Queue()
        feed = await self._join(game_id)
        feed.queues.add(queue)
        last = after_version
        try:
            for entry in await self._read_log(game_id, last):
                yield entry
                last = entry.version
            while True:
                handed = await queue.get()
                if handed is None:  # nothing heard of the game for a while
                    missed = await self._read_log(game_id, last)
                else:
                    if handed.version <= last:
                        continue
                    missed = (
                        [handed]
                        if handed.version == last + 1
                        else await self._read_log(game_id, last)
                    )
                for found in missed:
                    if found.version > last:
                        yield found
                        last = found.version
        finally:
            feed.queues.discard(queue)
            await self._leave(game_id, feed)

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
            game_id, data = published
            feed = self._feeds.get(game_id)
            if feed is None:
                continue
            try:
                entry = publication.decode(data)
            except ValueError as exc:
                log.warning("watch hub: %s on %s", exc, game_id)
                continue
            feed.hand(entry, asyncio.get_running_loop().time())

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
                for listener in feed.listeners:
                    listener.deliver(None)
