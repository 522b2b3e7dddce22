"""Rate limits counted in Redis, so that they hold across every replica.

A :class:`RateLimit` allows ``limit`` events per fixed window of ``window_ms``
for one key (a client address, a player): the first event of a window creates
the counter with that expiry, each event adds one, and past the limit the
caller is told how long the window still runs (the ``retry_after_ms`` of the
RESOURCE_EXHAUSTED ``RATE_LIMITED`` refusal,
:func:`truc_protocol.errors.rate_limited`). One key per count, so on a Redis
Cluster each count is one script on one node. A fixed window admits at most
``2 * limit`` events in any ``window_ms`` (at a window's edge): the defaults
are set with that in mind.

The game service counts its per-action limits inside the scripts that already
run per action (its own ``over_rate`` Lua function, the same arithmetic);
:func:`count` is for the calls that have no script of their own (guest
sign-ins, tickets).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .connection import RedisClient, script

__all__ = ["RATE_LUA", "RateLimit", "count"]

RATE_LUA: Final = """
local function over_rate(key, limit, window)
  if tonumber(limit) <= 0 then return nil end
  local n = redis.call('INCR', key)
  if n == 1 then redis.call('PEXPIRE', key, window) end
  if n > tonumber(limit) then
    local wait = redis.call('PTTL', key)
    if wait < 0 then
      redis.call('PEXPIRE', key, window)
      wait = tonumber(window)
    end
    return wait
  end
  return nil
end
"""
"""Lua: count one more event of ``key`` in its window; the ms to wait if that
is over ``limit`` (0 or less: no limit), else nil. A counter that lost its
expiry (it cannot, but a hand-made key could) gets one again."""

_COUNT: Final = (
    RATE_LUA
    + """
local wait = over_rate(KEYS[1], ARGV[1], ARGV[2])
if wait then return wait end
return -1
"""
)


@dataclass(frozen=True, slots=True)
class RateLimit:
    """At most ``limit`` events per ``window_ms`` per key (``limit`` 0: no limit)."""

    limit: int
    window_ms: int

    def __post_init__(self) -> None:
        if self.limit < 0 or self.window_ms < 1:
            raise ValueError(f"a rate limit needs limit >= 0 and window_ms >= 1, not {self}")

    @property
    def unlimited(self) -> bool:
        return self.limit == 0


async def count(client: RedisClient, key: str, rate: RateLimit) -> int | None:
    """Count one more event of ``key``: the ms to wait if it is over ``rate``,
    else None (no Redis call at all when ``rate`` is unlimited)."""
    if rate.unlimited:
        return None
    reply = await script(client, _COUNT)(keys=[key], args=[rate.limit, rate.window_ms])
    wait = int(reply)
    return wait if wait >= 0 else None
