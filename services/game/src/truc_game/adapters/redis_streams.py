"""The streams each player holds open, on Redis (the
:class:`~truc_game.ports.StreamLeases` port).

One sorted set per player (:func:`.redis_keys.streams`): stream id -> the time
(ms) its lease runs out. Opening a stream is one script on that key: drop the
leases that ran out (a replica that died renews none), refuse if the player
still holds ``limit``, else add the new one. Each replica renews the leases of
the streams it holds in one pipeline (:meth:`RedisStreamLeases.renew`) and
removes a stream's when it closes. The key itself expires a lease after its
last change, so a player who leaves leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from truc_redis.connection import RedisClient, script
from truc_redis.errors import translate_errors
from truc_telemetry.metrics import timed

from . import redis_keys as keys

__all__ = ["RedisStreamLeases"]

_TAKE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if tonumber(ARGV[3]) > 0 and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
"""
"""ARGV: now (ms), the lease's end, the limit (0: none), the stream id, the
key's expiry (ms)."""

_reachable = translate_errors("game store")


class RedisStreamLeases:
    """Stream leases on Redis (one server or a cluster)."""

    def __init__(self, redis: RedisClient, *, lease_ms: int) -> None:
        """``lease_ms``: how long a lease lasts unless renewed (the key of a
        player lasts as long after its last change)."""
        self._redis = redis
        self._lease_ms = lease_ms
        self._take = script(redis, _TAKE)

    @_reachable
    @timed("stream_take")
    async def take(
        self, player: str, stream: str, *, limit: int, now_ms: int, until_ms: int
    ) -> bool:
        taken = await self._take(
            keys=[keys.streams(player)], args=[now_ms, until_ms, limit, stream, self._lease_ms]
        )
        return bool(taken)

    @_reachable
    @timed("stream_drop")
    async def drop(self, player: str, stream: str) -> None:
        await self._redis.zrem(keys.streams(player), stream)

    @_reachable
    @timed("stream_renew")
    async def renew(self, held: Mapping[str, Collection[str]], until_ms: int) -> None:
        if not held:
            return
        pipe = self._redis.pipeline(transaction=False)
        for player, streams in held.items():
            if streams:
                key = keys.streams(player)
                pipe.zadd(key, dict.fromkeys(streams, until_ms), xx=True)
                pipe.pexpire(key, self._lease_ms)
        await pipe.execute()
