"""The lobby's rate limits, counted in Redis so that they hold across every replica.

Each is a :class:`truc_redis.limits.RateLimit` (``limit`` calls per window;
``limit`` 0: none) counted by :func:`truc_redis.limits.count` under a key of
the lobby's hash tag, and refused RESOURCE_EXHAUSTED ``RATE_LIMITED`` with the
wait (``retry_after_ms``, :func:`truc_protocol.errors.rate_limited`):

* guest sign-ins per client address (:mod:`truc_lobby.addresses`), then of
  every address together (an address over its own limit is not counted in the
  total, so one address cannot use up everyone's sign-ins by itself);
* tickets created per player;
* stream tokens issued per player;
* spectator grants issued per player.

A refused call is still counted: hammering past a limit does not shorten the
wait. Redis failing is ``STORE_UNAVAILABLE`` (the call is refused, not let
through: the lobby needs Redis for everything else anyway).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from truc_protocol.errors import rate_limited
from truc_redis.connection import RedisClient
from truc_redis.limits import RateLimit, count

from .store import P, store_call

__all__ = ["LobbyLimits", "RateLimits"]

_RATE: Final = f"{P}:rate"


@dataclass(frozen=True, slots=True)
class RateLimits:
    """The lobby's rate limits (from :class:`~truc_lobby.config.Settings`)."""

    signins_per_address: RateLimit
    signins_total: RateLimit
    tickets_per_player: RateLimit
    stream_tokens_per_player: RateLimit
    spectator_grants_per_player: RateLimit

    @staticmethod
    def unlimited() -> RateLimits:
        none = RateLimit(0, 1000)
        return RateLimits(none, none, none, none, none)


class LobbyLimits:
    """Counts the lobby's limited calls in Redis; raises ``RATE_LIMITED`` past a limit."""

    def __init__(self, redis: RedisClient, limits: RateLimits) -> None:
        self._redis = redis
        self.limits = limits

    @store_call
    async def _count(self, key: str, rate: RateLimit, what: str) -> None:
        """One more call under ``key``; RATE_LIMITED (naming ``what``) past ``rate``."""
        wait = await count(self._redis, key, rate)
        if wait is not None:
            raise rate_limited(wait, what)

    async def guest_sign_in(self, address: str) -> None:
        """One more guest sign-in from ``address`` (a counted client address)."""
        limits = self.limits
        await self._count(
            f"{_RATE}:signin:{address}",
            limits.signins_per_address,
            "guest sign-ins from this address",
        )
        await self._count(f"{_RATE}:signin", limits.signins_total, "guest sign-ins")

    async def ticket(self, player: str) -> None:
        """One more ticket created by ``player``."""
        await self._count(
            f"{_RATE}:ticket:{player}",
            self.limits.tickets_per_player,
            "tickets created by this player",
        )

    async def stream_token(self, player: str) -> None:
        """One more stream token for ``player``."""
        await self._count(
            f"{_RATE}:stream:{player}",
            self.limits.stream_tokens_per_player,
            "stream tokens for this player",
        )

    async def spectator_grant(self, player: str) -> None:
        """One more spectator grant for ``player``."""
        await self._count(
            f"{_RATE}:spectate:{player}",
            self.limits.spectator_grants_per_player,
            "spectator grants for this player",
        )
