"""The game store on Redis: one atomic compare-and-set per action.

Per game (keys in :mod:`truc_game.adapters.redis_keys`): a hash with the
version, the current state, the meta (players, turn time), the current
deadline and version 1's state, events and deadline; and the game's log, a
string of one 16-byte record per version after the first (the action, the
deadline it set, its request id's digest: :func:`truc_game.ports.log_record`).
No other version's state is stored: :mod:`truc_game.history` rebuilds any
version from the first state and the log (the engine is deterministic), so a
game costs well under 1 KB when created and 16 bytes per action, and a
finished match is its own compact replay (when it ends the log drops its
deadlines: 10 bytes per action). A request id is recognised by its
digest anywhere in the log (the scripts search it), so a retry is never
applied twice however old its original. Each write is one Lua script, so it
is atomic and costs one round trip:

* ``LOAD`` reads what an action needs (version, state, meta, deadline), counts
  the player's rate, and says whether the request id was already applied (and
  with which action: a request id reused for another is refused). The rate is
  counted first, so a replay of an applied request id counts too; a session's
  action refused on the replica's copy is counted with a LOAD as well.
* ``COMMIT`` counts the player's rate (for a session's action, which is never
  LOADed), says whether the request id was applied before, checks the
  version, counts the acting seat's missed turns in a row
  (:mod:`truc_game.absence`), writes the state, appends the action's record,
  moves the game's deadline (an absent seat's is the short one), appends the
  game's end to its shard's ended-games stream (:mod:`truc_redis.game_ends`)
  when the version finishes it, and publishes the version itself (state,
  events, missed turns) on the game's channel (:mod:`.publication`), for
  watchers and sessions on every replica.
* ``CREATE`` writes version 1 unless the game exists.
* ``READ_LOG`` reads the game and its log at one instant (a script rather
  than MULTI/EXEC, which the Redis Cluster client lacks); for GetGame it first
  counts the reader's rate and refuses a reader without a seat, so neither
  costs a read of the log.

No rules logic lives in Lua: it only does compare-and-set and bookkeeping.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from truc_game.absence import MISSED_CAP
from truc_game.ports import (
    FINISHED_RECORD_BYTES,
    KEEP_DEADLINE,
    RECORD_BYTES,
    Absence,
    AlreadyApplied,
    Entry,
    GameLog,
    GameMeta,
    GameMissing,
    Loaded,
    NotSeated,
    RateLimited,
    Reader,
    Snapshot,
    VersionConflict,
    request_digest,
)
from truc_redis.connection import RedisClient, script
from truc_redis.errors import translate_errors
from truc_redis.game_ends import ENDED_MAXLEN
from truc_redis.limits import RATE_LUA
from truc_telemetry.metrics import timed

from . import publication
from . import redis_keys as keys
from .redis_keys import Keys

__all__ = ["RedisGameStore"]

_PRIOR = f"""
local function prior(log, digest, finished)
  if digest == '' then return nil end
  local size = {RECORD_BYTES}
  if finished then size = {FINISHED_RECORD_BYTES} end
  local from = 1
  while true do
    local at = string.find(log, digest, from, true)
    if not at then return nil end
    if (at - 1) % size == size - 8 then
      local start = at - (size - 8)
      return (start - 1) / size + 2, string.sub(log, start, start + 1)
    end
    from = at + 1
  end
end
"""
"""Lua: the version a request produced and its record's action entry (2
bytes), if its digest is in the game's log (at a record's digest offset), else
nil. The caller compares the action with the retry's: a request id reused for
another action is refused (REQUEST_ID_REUSED), not answered as a replay."""

_SEATED = """
local function seated(meta, player)
  for _, p in ipairs(cjson.decode(meta)['p']) do
    if p == player then return true end
  end
  return false
end
"""
"""Lua: whether ``player`` holds a seat in a game of this meta (GameMeta.encode)."""

_LOAD = (
    _PRIOR
    + RATE_LUA
    + """
local g = redis.call('HMGET', KEYS[1], 'v', 's', 'm', 'd', 'c')
if not g[1] then return {0} end
local wait = over_rate(KEYS[3], ARGV[2], ARGV[3])
if wait then return {2, wait} end
if ARGV[1] ~= '' then
  local before, action = prior(redis.call('GET', KEYS[2]) or '', ARGV[1], g[5])
  if before then return {1, g[1], g[2], g[3], g[4] or '', before, action} end
end
return {1, g[1], g[2], g[3], g[4] or '', '', ''}
"""
)

_ABSENCE = f"""
local function absence(game, d, record, missed)
  if ARGV[14] == '' then return d, record, missed or '' end
  missed = missed or ''
  local seat = tonumber(ARGV[14]) + 1
  local count, moved = (string.byte(missed, seat) or 48) - 48, 0
  if ARGV[15] == '1' then moved = math.min(count + 1, {MISSED_CAP}) end
  if moved ~= count then
    if #missed < seat then missed = missed .. string.rep('0', seat - #missed) end
    missed = string.sub(missed, 1, seat - 1) .. string.char(48 + moved)
      .. string.sub(missed, seat + 1)
    redis.call('HSET', game, 'a', missed)
  end
  local next_seat = tonumber(ARGV[16])
  if next_seat and (string.byte(missed, next_seat + 1) or 48) - 48 >= tonumber(ARGV[17]) then
    d, record = ARGV[18], ARGV[19]
  end
  return d, record, missed
end
"""
"""Lua: the game's missed turns moved (``missed``, the hash's ``a``: one
character per seat, seat 0 first, ``'0'`` plus its turns in a row played at
its deadline, at most {MISSED_CAP}; nil: none), for the acting seat (ARGV[14]):
one more if its action was timed out (ARGV[15]), else none; and the deadline
and log record to write: the short ones (ARGV[18], ARGV[19]) if the seat to
act next (ARGV[16]) missed ARGV[17] turns in a row or more
(:mod:`truc_game.absence`), else the commit's; and the counts, as published.
A player's action whose seat missed no turn (the usual commit) writes nothing."""

_COMMIT = (
    _PRIOR
    + RATE_LUA
    + _ABSENCE
    + """
local g = redis.call('HMGET', KEYS[1], 'v', 'c', 'a')
local v = g[1]
if not v then return {0} end
local wait = over_rate(KEYS[4], ARGV[10], ARGV[11])
if wait then return {4, wait} end
if ARGV[4] ~= '' then
  local before, action = prior(redis.call('GET', KEYS[2]) or '', ARGV[4], g[2])
  if before then return {3, before, action} end
end
if tonumber(v) ~= tonumber(ARGV[1]) then return {2} end
local nv = tonumber(v) + 1
local d, record, missed = absence(KEYS[1], ARGV[5], ARGV[3], g[3])
redis.call('HSET', KEYS[1], 'v', nv, 's', ARGV[2])
redis.call('APPEND', KEYS[2], record)
if d == 'keep' then
  d = redis.call('HGET', KEYS[1], 'd') or ''
elseif d == '' then
  redis.call('HSET', KEYS[1], 'd', '')
  redis.call('ZREM', KEYS[3], ARGV[6])
else
  redis.call('HSET', KEYS[1], 'd', d)
  redis.call('ZADD', KEYS[3], d, ARGV[6])
end
if ARGV[12] ~= '-' and not g[2] then
  local log, kept = redis.call('GET', KEYS[2]), {}
  for at = 1, #log, 16 do
    kept[#kept + 1] = string.sub(log, at, at + 1) .. string.sub(log, at + 8, at + 15)
  end
  redis.call('SET', KEYS[2], table.concat(kept))
  redis.call('HSET', KEYS[1], 'c', 1)
  redis.call('XADD', KEYS[5], 'MAXLEN', '~', ARGV[13], '*', 'g', ARGV[6], 'w', ARGV[12])
end
redis.call('PEXPIRE', KEYS[1], ARGV[7])
redis.call('PEXPIRE', KEYS[2], ARGV[7])
redis.call('PUBLISH', ARGV[8], nv .. '\\n' .. d .. '\\n' .. missed .. '\\n' .. ARGV[9])
return {1, nv, d, missed}
"""
)

_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'v', 1, 's', ARGV[1], 'm', ARGV[3], 'd', ARGV[4],
  'f', ARGV[1], 'e', ARGV[2], 'g', ARGV[4])
if ARGV[4] ~= '' then redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5]) end
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('PUBLISH', ARGV[7], '1\\n' .. ARGV[4] .. '\\n\\n' .. ARGV[8])
return 1
"""

_READ_LOG = (
    RATE_LUA
    + _SEATED
    + """
local g = redis.call('HMGET', KEYS[1], 'v', 's', 'm', 'd', 'f', 'e', 'g', 'c')
if not g[1] then return {0} end
if KEYS[3] then
  local wait = over_rate(KEYS[3], ARGV[2], ARGV[3])
  if wait then return {2, wait} end
  if ARGV[1] ~= '' and not seated(g[3], ARGV[1]) then return {3} end
end
return {1, g, redis.call('GET', KEYS[2]) or ''}
"""
)
"""With a reader (KEYS[3], its rate key; ARGV: the player who must hold a seat
or '', the limit, the window): the read is counted, and an unseated reader is
refused, before the log is read."""

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


def _absence_args(absence: Absence | None) -> list[str | int | bytes]:
    """ARGV[14..19] of the commit script (:data:`_ABSENCE`); all empty: no count."""
    if absence is None:
        return ["", "", "", 0, "", b""]
    next_seat = absence.next_seat
    return [
        absence.seat,
        "1" if absence.timed_out else "0",
        "" if next_seat is None else next_seat,
        absence.turns,
        absence.deadline_ms,
        absence.record,
    ]


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
        self._read_log = script(redis, _READ_LOG)

    @_reachable
    @timed("create")
    async def create(
        self, game_id: str, *, state: bytes, events: bytes, meta: GameMeta, deadline_ms: int | None
    ) -> bool:
        """Write version 1; False if the game already exists."""
        k = Keys(game_id)
        created = await self._create(
            keys=[k.game, k.deadlines],
            args=[
                state,
                events,
                meta.encode(),
                _deadline_arg(deadline_ms),
                game_id,
                self._ttl_ms,
                keys.channel(game_id),
                publication.tail("", state, events),
            ],
        )
        return bool(created)

    @_reachable
    @timed("load")
    async def load(
        self, game_id: str, *, request_id: str, player: str, kind: str, limit: int, window_ms: int
    ) -> Loaded:
        """Read for an action (the rate counted first, then the request id
        looked for). Raises GameMissing or RateLimited."""
        k = Keys(game_id)
        reply = await self._load(
            keys=[k.game, k.log, k.rate(kind, player)],
            args=[_digest(request_id), limit, window_ms],
        )
        status = int(reply[0])
        if status == 0:
            raise GameMissing(game_id)
        if status == 2:
            raise RateLimited(max(int(reply[1]), 1))
        prior = int(reply[5]) if reply[5] else None
        return Loaded(_snapshot(reply[1], reply[2], reply[3], reply[4]), prior, bytes(reply[6]))

    @_reachable
    @timed("read")
    async def read(self, game_id: str) -> Snapshot:
        """The game as it is now. Raises GameMissing."""
        values = await self.redis.hmget(Keys(game_id).game, ["v", "s", "m", "d"])  # type: ignore[misc]
        if values[0] is None:
            raise GameMissing(game_id)
        return _snapshot(*values)

    @_reachable
    @timed("read_log")
    async def read_log(self, game_id: str, reader: Reader | None = None) -> GameLog:
        """The game now and what rebuilds its every version, at one instant;
        with a ``reader``, counted (RateLimited) and seat-checked (NotSeated)
        in the same step, before the log is read."""
        k = Keys(game_id)
        if reader is None:
            reply = await self._read_log(keys=[k.game, k.log])
        else:
            reply = await self._read_log(
                keys=[k.game, k.log, k.rate("r", reader.player)],
                args=[reader.player if reader.seated else "", reader.limit, reader.window_ms],
            )
        status = int(reply[0])
        if status == 0:
            raise GameMissing(game_id)
        if status == 2:
            raise RateLimited(max(int(reply[1]), 1))
        if status == 3:
            raise NotSeated(game_id)
        values, records = reply[1], reply[2]
        return GameLog(
            snapshot=_snapshot(*values[:4]),
            first_state=bytes(values[4] or b""),
            first_events=bytes(values[5] or b""),
            first_deadline_ms=int(values[6]) if values[6] else None,
            records=bytes(records),
            finished=bool(values[7]),
        )

    @_reachable
    @timed("commit")
    async def commit(
        self,
        game_id: str,
        *,
        expected_version: int,
        state: bytes,
        events: bytes,
        record: bytes,
        request_id: str,
        deadline_ms: int | None,
        finished: bool = False,
        winner: int | None = None,
        rate: tuple[str, str, int, int] | None = None,
        absence: Absence | None = None,
    ) -> Entry:
        """Compare-and-set: write the next version and return its entry, in one
        round trip (request id, rate count, version check, missed turns, state,
        action record, deadline, ended-games stream and publication in one script).

        ``deadline_ms``: the new deadline, None for none, KEEP_DEADLINE to keep it.
        ``finished``: this version ends the game (its keys get the finished TTL;
        its end, won by ``winner``, goes to the shard's ended-games stream).
        ``rate``: (player, kind, limit, window ms) to count in the same step.
        ``absence``: the missed turns to count, and the short deadline (and
        record) to write instead if the seat to act next is absent.
        Raises GameMissing, VersionConflict, RateLimited, or AlreadyApplied when
        the request id was applied before.
        """
        k = Keys(game_id)
        player, kind, limit, window_ms = rate or ("", "a", 0, 0)
        reply = await self._commit(
            keys=[k.game, k.log, k.deadlines, k.rate(kind, player), k.ended],
            args=[
                expected_version,
                state,
                record,
                _digest(request_id),
                _deadline_arg(deadline_ms),
                game_id,
                self._finished_ttl_ms if finished else self._ttl_ms,
                keys.channel(game_id),
                publication.tail(request_id, state, events),
                limit,
                window_ms,
                ("" if winner is None else "AB"[winner]) if finished else "-",
                ENDED_MAXLEN,
                *_absence_args(absence),
            ],
        )
        status = int(reply[0])
        if status == 1:
            deadline = reply[2]
            return Entry(
                int(reply[1]),
                state,
                events,
                int(deadline) if deadline else None,
                request_id,
                publication.missed_of(reply[3]),
            )
        if status == 0:
            raise GameMissing(game_id)
        if status == 3:
            raise AlreadyApplied(int(reply[1]), bytes(reply[2]))
        if status == 4:
            raise RateLimited(max(int(reply[1]), 1))
        raise VersionConflict(game_id)

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


def _digest(request: str) -> bytes:
    """A request key's digest as the scripts look for it (empty: no request id)."""
    return request_digest(request) if request else b""
