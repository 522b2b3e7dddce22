"""Every Redis key and channel of the game service, built in one place.

All keys of one game share a hash tag, so a Lua script may touch them together
and Redis Cluster keeps them on one node. The tag is the game's *shard*
(``{g0}`` .. ``{g63}``, from a CRC of the game id), not the game id itself, so
that each shard's deadline index lives in the same slot as its games and is
updated in the same atomic script. 64 shards spread games over 64 slots,
plenty for any cluster of up to 64 primaries.
"""

from __future__ import annotations

import zlib
from typing import Final

__all__ = ["SHARDS", "Keys", "channel", "deadlines", "shard_of"]

SHARDS: Final = 64
PREFIX: Final = "truc"


def shard_of(game_id: str) -> int:
    return zlib.crc32(game_id.encode()) % SHARDS


def deadlines(shard: int) -> str:
    """Sorted set: game id -> the time (ms) its seat to act runs out of time."""
    return f"{PREFIX}:{{g{shard}}}:deadlines"


def channel(game_id: str) -> str:
    """Pub/sub channel announcing each new version of a game."""
    return f"{PREFIX}:changed:{game_id}"


class Keys:
    """The keys of one game."""

    __slots__ = ("deadlines", "events", "game", "requests", "shard")

    def __init__(self, game_id: str) -> None:
        self.shard = shard_of(game_id)
        base = f"{PREFIX}:{{g{self.shard}}}:game:{game_id}"
        self.game = base
        """Hash: v (version), s (state), m (meta), d (deadline ms, '' if none)."""
        self.requests = base + ":requests"
        """Hash: player NUL request id -> the version it produced."""
        self.events = base + ":events"
        """Stream: one entry per version, id '<version>-0': s (state), e (events), d (deadline)."""
        self.deadlines = deadlines(self.shard)

    def rate(self, kind: str, player: str) -> str:
        """Counter of a player's actions (kind 'a') or signals ('s') in the current window."""
        return f"{self.game}:rate:{kind}:{player}"
