"""The game store on Redis: one atomic compare-and-set per action.

Per game (keys in :mod:`truc_game.adapters.redis_keys`): a hash with the version, the
encoded state, the meta (players, turn time) and the current deadline; a hash
of request ids; a stream holding, for every version, the state after it, the
events it caused and the deadline it set. Each write is one Lua script, so it is atomic and costs
one round trip:

* ``LOAD`` reads what an action needs (version, state, meta, deadline), says
  whether the request id was already applied, and counts the player's rate.
* ``COMMIT`` checks the version, writes the state, appends the stream entry,
  records the request id, moves the game's deadline and publishes the new
  version on the game's channel (for watchers on every replica).
* ``CREATE`` writes version 1 unless the game exists.
* ``READ_WITH_LOG`` reads the game and its whole stream at one instant (a
  script rather than MULTI/EXEC, which the Redis Cluster client lacks).

No rules logic lives in Lua: it only does compare-and-set and bookkeeping.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from truc_game.ports import (
    KEEP_DEADLINE,
    AlreadyApplied,
    Entry,
    GameMeta,
    GameMissing,
    Loaded,
    RateLimited,
    Snapshot,
    VersionConflict,
)
from truc_redis.connection import RedisClient, script
from truc_redis.errors import translate_errors
from truc_telemetry.metrics import timed

from . import redis_keys as keys
from .redis_keys import Keys

__all__ = ["RedisGameStore"]

_LOAD = """
local g = redis.call('HMGET', KEYS[1], 'v', 's', 'm', 'd')
if not g[1] then return {0} end
if ARGV[1] ~= '' then
  local prior = redis.call('HGET', KEYS[2], ARGV[1])
  if prior then return {1, g[1], g[2], g[3], g[4] or '', prior} end
end
local limit = tonumber(ARGV[2])
if limit > 0 then
  local n = redis.call('INCR', KEYS[3])
  if n == 1 then redis.call('PEXPIRE', KEYS[3], ARGV[3]) end
  if n > limit then return {2, redis.call('PTTL', KEYS[3])} end
end
return {1, g[1], g[2], g[3], g[4] or '', ''}
"""

_COMMIT = """
local v = redis.call('HGET', KEYS[1], 'v')
if not v then return {0} end
if ARGV[4] ~= '' then
  local prior = redis.call('HGET', KEYS[2], ARGV[4])
  if prior then return {3, prior} end
end
if tonumber(v) ~= tonumber(ARGV[1]) then return {2} end
local nv = tonumber(v) + 1
redis.call('HSET', KEYS[1], 'v', nv, 's', ARGV[2])
local d = ARGV[5]
if d == 'keep' then d = redis.call('HGET', KEYS[1], 'd') or '' end
redis.call('XADD', KEYS[3], nv .. '-0', 's', ARGV[2], 'e', ARGV[3], 'd', d)
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[2], ARGV[4], nv)
  redis.call('PEXPIRE', KEYS[2], ARGV[7])
end
if ARGV[5] == '' then
  redis.call('HSET', KEYS[1], 'd', '')
  redis.call('ZREM', KEYS[4], ARGV[6])
elseif ARGV[5] ~= 'keep' then
  redis.call('HSET', KEYS[1], 'd', ARGV[5])
  redis.call('ZADD', KEYS[4], ARGV[5], ARGV[6])
end
redis.call('PEXPIRE', KEYS[1], ARGV[7])
redis.call('PEXPIRE', KEYS[3], ARGV[7])
redis.call('PUBLISH', ARGV[8], nv)
return {1, nv}
"""

_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'v', 1, 's', ARGV[1], 'm', ARGV[3], 'd', ARGV[4])
redis.call('XADD', KEYS[2], '1-0', 's', ARGV[1], 'e', ARGV[2], 'd', ARGV[4])
if ARGV[4] ~= '' then redis.call('ZADD', KEYS[3], ARGV[4], ARGV[5]) end
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
redis.call('PUBLISH', ARGV[7], 1)
return 1
"""

_READ_WITH_LOG = """
return {redis.call('HMGET', KEYS[1], 'v', 's', 'm', 'd'), redis.call('XRANGE', KEYS[2], '-', '+')}
"""

_CLAIM = """
local due = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not due or tonumber(due) ~= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
"""


_reachable = translate_errors("game store")


def _deadline_arg(deadline_ms: int | None) -> str:
    if deadline_ms is None:
        return ""
    if deadline_ms == KEEP_DEADLINE:
        return "keep"
    return str(deadline_ms)


def _snapshot(version: Any, state: Any, meta: Any, deadline: Any) -> Snapshot:
    return Snapshot(
        version=int(version),
        state=bytes(state),
        meta=GameMeta.decode(meta),
        deadline_ms=int(deadline) if deadline else None,
    )


class RedisGameStore:
    """The game store on Redis (the :class:`~truc_game.ports.GameStore` port).
    ``redis`` (one server or a cluster, see :mod:`truc_redis.connection`)
    must not ``decode_responses`` (states are bytes)."""

    def __init__(self, redis: RedisClient, *, ttl_seconds: int, finished_ttl_seconds: int) -> None:
        """A game's keys expire ``ttl_seconds`` after its last action, or
        ``finished_ttl_seconds`` after the action that finished it (its log is kept
        for its players that long)."""
        self.redis = redis
        self._ttl_ms = str(ttl_seconds * 1000)
        self._finished_ttl_ms = str(finished_ttl_seconds * 1000)
        self._load = script(redis, _LOAD)
        self._commit = script(redis, _COMMIT)
        self._create = script(redis, _CREATE)
        self._claim = script(redis, _CLAIM)
        self._read_with_log = script(redis, _READ_WITH_LOG)

    @_reachable
    @timed("create")
    async def create(
        self, game_id: str, *, state: bytes, events: bytes, meta: GameMeta, deadline_ms: int | None
    ) -> bool:
        """Write version 1; False if the game already exists."""
        k = Keys(game_id)
        created = await self._create(
            keys=[k.game, k.events, k.deadlines],
            args=[
                state,
                events,
                meta.encode(),
                _deadline_arg(deadline_ms),
                game_id,
                self._ttl_ms,
                keys.channel(game_id),
            ],
        )
        return bool(created)

    @_reachable
    @timed("load")
    async def load(
        self, game_id: str, *, request_id: str, player: str, kind: str, limit: int, window_ms: int
    ) -> Loaded:
        """Read for an action. Raises GameMissing or RateLimited."""
        k = Keys(game_id)
        reply = await self._load(
            keys=[k.game, k.requests, k.rate(kind, player)],
            args=[request_id, limit, window_ms],
        )
        status = int(reply[0])
        if status == 0:
            raise GameMissing(game_id)
        if status == 2:
            raise RateLimited(max(int(reply[1]), 1))
        prior = int(reply[5]) if reply[5] else None
        return Loaded(_snapshot(reply[1], reply[2], reply[3], reply[4]), prior)

    @_reachable
    @timed("read")
    async def read(self, game_id: str) -> Snapshot:
        """The game as it is now. Raises GameMissing."""
        values = await self.redis.hmget(Keys(game_id).game, ["v", "s", "m", "d"])  # type: ignore[misc]
        if values[0] is None:
            raise GameMissing(game_id)
        return _snapshot(*values)

    @_reachable
    @timed("read_with_log")
    async def read_with_log(self, game_id: str) -> tuple[Snapshot, list[Entry]]:
        """The game now and its whole event log, read at one instant."""
        k = Keys(game_id)
        values, raw = await self._read_with_log(keys=[k.game, k.events])
        if values[0] is None:
            raise GameMissing(game_id)
        return _snapshot(*values), [
            _entry(entry_id, dict(zip(flat[::2], flat[1::2], strict=True)))
            for entry_id, flat in raw
        ]

    @_reachable
    @timed("commit")
    async def commit(
        self,
        game_id: str,
        *,
        expected_version: int,
        state: bytes,
        events: bytes,
        request_id: str,
        deadline_ms: int | None,
        finished: bool = False,
    ) -> int:
        """Compare-and-set: write the next version and return it.

        ``deadline_ms``: the new deadline, None for none, KEEP_DEADLINE to keep it.
        ``finished``: this version ends the game (its keys get the finished TTL).
        Raises GameMissing, VersionConflict, or AlreadyApplied when the request id
        was applied meanwhile (a retry racing its original).
        """
        k = Keys(game_id)
        reply = await self._commit(
            keys=[k.game, k.requests, k.events, k.deadlines],
            args=[
                expected_version,
                state,
                events,
                request_id,
                _deadline_arg(deadline_ms),
                game_id,
                self._finished_ttl_ms if finished else self._ttl_ms,
                keys.channel(game_id),
            ],
        )
        status = int(reply[0])
        if status == 1:
            return int(reply[1])
        if status == 0:
            raise GameMissing(game_id)
        if status == 3:
            raise AlreadyApplied(int(reply[1]))
        raise VersionConflict(game_id)

    @_reachable
    @timed("entries")
    async def entries(
        self, game_id: str, after_version: int, count: int | None = None
    ) -> list[Entry]:
        """The event log's versions after ``after_version``, oldest first."""
        raw = await self.redis.xrange(
            Keys(game_id).events, min=f"{after_version + 1}-0", max="+", count=count
        )
        return [_entry(entry_id, fields) for entry_id, fields in raw]

    @_reachable
    @timed("entry")
    async def entry(self, game_id: str, version: int) -> Entry | None:
        raw = await self.redis.xrange(Keys(game_id).events, min=f"{version}-0", max=f"{version}-0")
        return _entry(*raw[0]) if raw else None

    @_reachable
    @timed("due")
    async def due(self, now_ms: int, limit: int = 100) -> list[tuple[str, int]]:
        """(game id, deadline) of deadlines that have passed, across all shards."""
        pipe = self.redis.pipeline(transaction=False)
        for shard in range(keys.SHARDS):
            pipe.zrangebyscore(
                keys.deadlines(shard), "-inf", now_ms, start=0, num=limit, withscores=True
            )
        results: Sequence[Sequence[tuple[bytes, float]]] = await pipe.execute()
        return [(member.decode(), int(score)) for found in results for member, score in found]

    @_reachable
    @timed("forget_deadline")
    async def forget_deadline(self, game_id: str) -> None:
        """Drop a deadline whose game is gone (expired)."""
        k = Keys(game_id)
        await self.redis.zrem(k.deadlines, game_id)

    @_reachable
    @timed("claim")
    async def claim(self, game_id: str, due_ms: int, lease_until_ms: int) -> bool:
        """Take an expired deadline for this replica: True if it was still ``due_ms``
        (it then moves to ``lease_until_ms``, so another replica retries if we die)."""
        k = Keys(game_id)
        return bool(await self._claim(keys=[k.deadlines], args=[game_id, due_ms, lease_until_ms]))

    @_reachable
    @timed("count_active")
    async def count_active(self) -> int:
        """Games in progress in the whole store: those with a deadline (a seat to act)."""
        pipe = self.redis.pipeline(transaction=False)
        for shard in range(keys.SHARDS):
            pipe.zcard(keys.deadlines(shard))
        counts: Sequence[int] = await pipe.execute()
        return sum(counts)


def _entry(entry_id: bytes, fields: dict[bytes, bytes]) -> Entry:
    version = int(entry_id.split(b"-", 1)[0])
    deadline = fields.get(b"d")
    return Entry(version, fields[b"s"], fields[b"e"], int(deadline) if deadline else None)
