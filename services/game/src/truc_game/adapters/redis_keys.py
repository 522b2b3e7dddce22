"""Every Redis key and channel of the game service, built in one place.

All keys of one game share a hash tag, so a Lua script may touch them together
and Redis Cluster keeps them on one node. The tag is the game's *shard*
(``{g0}`` .. ``{g63}``, from a CRC of the game id), not the game id itself, so
that each shard's deadline index lives in the same slot as its games and is
updated in the same atomic script. 64 shards spread games over 64 slots,
plenty for any cluster of up to 64 primaries.
"""

from __future__ import annotations

from typing import Final

from truc_redis.game_ends import SHARDS, ended_stream, shard_of

__all__ = ["SHARDS", "Keys", "channel", "deadlines", "shard_of", "streams"]

PREFIX: Final = "truc"


def deadlines(shard: int) -> str:
    """Sorted set: game id -> the time (ms) its seat to act runs out of time."""
    return f"{PREFIX}:{{g{shard}}}:deadlines"


def streams(player: str) -> str:
    """Sorted set: the streams (WatchGame, Play) ``player`` holds open on every
    replica, stream id -> the time (ms) its lease runs out. One key per player,
    its own hash tag (every call on it is one command or one script)."""
    return f"{PREFIX}:streams:{{{player}}}"


def channel(game_id: str) -> str:
    """Pub/sub channel announcing each new version of a game."""
    return f"{PREFIX}:changed:{game_id}"


class Keys:
    """The keys of one game."""

    __slots__ = ("deadlines", "ended", "game", "log", "shard")

    def __init__(self, game_id: str) -> None:
        self.shard = shard_of(game_id)
        base = f"{PREFIX}:{{g{self.shard}}}:game:{game_id}"
        self.game = base
        """Hash: v (version), s (state), m (meta), d (deadline ms, '' if none),
        f, e, g (version 1's state, events and deadline), a (each seat's turns
        in a row played at its deadline, a character per seat: ``'0'`` plus the
        count; none: nobody missed one; :mod:`truc_game.absence`)."""
        self.log = base + ":log"
        """String: the game's log, one RECORD_BYTES record per version after
        the first (:func:`truc_game.ports.log_record`: the action, the deadline
        it set, its request id's digest), appended by every commit."""
        self.deadlines = deadlines(self.shard)
        self.ended = ended_stream(self.shard)
        """Stream of the shard's ended games (:mod:`truc_redis.game_ends`)."""

    def rate(self, kind: str, player: str) -> str:
        """Counter of a player's actions (kind 'a'), signals ('s') or reads of
        the game's log ('r', GetGame) in the current window."""
        return f"{self.game}:rate:{kind}:{player}"
