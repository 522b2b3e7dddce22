"""Put a game back a few versions in Redis, as a crash that lost the last second
of writes would (``appendfsync everysec``): :meth:`Rewind.snapshot` copies every
key of the game (DUMP), :meth:`Rewind.restore` later puts them back (DEL +
RESTORE, in one transaction), so the game is at the snapshot's version again."""

from __future__ import annotations

from dataclasses import dataclass

import redis.asyncio

from truc_game.adapters.redis_keys import Keys


@dataclass(frozen=True, slots=True)
class Snapshot:
    version: int
    keys: dict[bytes, tuple[bytes, int]]
    """Every key of the game: its DUMP and its time to live in ms (0: none)."""
    deadline: float | None
    """The game's score in its shard's deadline index (None: not in it)."""


class Rewind:
    """Snapshots and restores the Redis keys of one game."""

    def __init__(self, db: redis.asyncio.Redis, name: str) -> None:
        self._db = db
        self.game_id = name.removeprefix("games/")
        self._keys = Keys(self.game_id)
        self.taken: Snapshot | None = None

    async def version(self) -> int:
        """The game's version in Redis now."""
        raw = await self._db.hget(self._keys.game, "v")  # type: ignore[misc]
        assert raw is not None, f"no game {self.game_id} in Redis"
        return int(raw)

    async def _game_keys(self) -> set[bytes]:
        found = {key async for key in self._db.scan_iter(match=self._keys.game + ":*")}
        if await self._db.exists(self._keys.game):
            found.add(self._keys.game.encode())
        return found

    async def snapshot(self) -> int:
        """Copy every key of the game; its version."""
        keys: dict[bytes, tuple[bytes, int]] = {}
        for key in await self._game_keys():
            payload = await self._db.dump(key)
            ttl = await self._db.pttl(key)
            if payload is not None:
                keys[key] = (payload, max(ttl, 0))
        deadline = await self._db.zscore(self._keys.deadlines, self.game_id)
        self.taken = Snapshot(await self.version(), keys, deadline)
        return self.taken.version

    async def restore(self) -> tuple[int, int]:
        """Put the snapshot back, dropping whatever came after it; the versions
        before and after."""
        taken = self.taken
        assert taken is not None, "no snapshot to restore"
        before = await self.version()
        newer = await self._game_keys() - taken.keys.keys()
        async with self._db.pipeline(transaction=True) as pipe:
            for key in newer:
                pipe.delete(key)
            for key, (payload, ttl) in taken.keys.items():
                pipe.restore(key, ttl, payload, replace=True)
            if taken.deadline is None:
                pipe.zrem(self._keys.deadlines, self.game_id)
            else:
                pipe.zadd(self._keys.deadlines, {self.game_id: taken.deadline})
            await pipe.execute()
        after = await self.version()
        assert after == taken.version, (before, after, taken.version)
        return before, after
