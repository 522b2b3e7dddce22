"""The games being played at public tables, for ``ListLiveGames``.

The seat script (:meth:`truc_lobby.store.LobbyStore.seat`) writes each game's
:class:`~truc_lobby.store.SeatedTable` and, for a public table, adds the game to
:data:`~truc_lobby.store.LIVE` and to its rule set's
:func:`~truc_lobby.store.live_key` (game id -> when seated, ms); the results
follower (:mod:`truc_lobby.results`) takes it out of both in the script that
records its end. A game whose end the lobby never learns leaves them
:data:`~truc_lobby.store.LIVE_BOUND_MS` after it was seated (each seat and each
read drops the older ones), and a game whose record expired is dropped when a
read meets it. Pages run from the most recently seated down; a page token is
the (seat time, game id) of the last game of the previous page
(:func:`truc_lobby.history.page_token`), so games seated or ended meanwhile
never shift a page.
"""

from __future__ import annotations

import time

from truc_redis.connection import RedisClient
from truc_rules.rule_set import RuleSet

from .history import page_token, parse_page_token
from .store import LIVE, LIVE_BOUND_MS, SeatedTable, live_key, store_call, table_key

__all__ = ["LiveGames"]


class LiveGames:
    """Reads the live public games (the seat script and the results follower write them)."""

    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis

    @store_call
    async def page(
        self, size: int, token: str, rule_set: RuleSet | None = None
    ) -> tuple[list[SeatedTable], str]:
        """Up to ``size`` live public games after ``token`` (the most recently
        seated first), only those of ``rule_set`` if given, and the token of the
        next page ("" if there is none). Raises
        :class:`~truc_lobby.history.PageTokenError` for a token this lobby did
        not issue, and ``Unavailable`` (``STORE_UNAVAILABLE``) when Redis fails."""
        key = LIVE if rule_set is None else live_key(rule_set)
        bound = parse_page_token(token) if token else None
        await self._redis.zremrangebyscore(key, "-inf", int(time.time() * 1000) - LIVE_BOUND_MS)
        found: list[SeatedTable] = []
        while True:
            games, more = await self._read(key, size - len(found), bound)
            raw = await self._redis.mget([table_key(g) for g, _ in games]) if games else []
            gone = [g for (g, _), r in zip(games, raw, strict=True) if r is None]
            if gone:  # their records expired: drop them, read on
                await self._redis.zrem(key, *gone)
            found += [SeatedTable.decode(g, r) for (g, _), r in zip(games, raw, strict=True) if r]
            if not games or len(found) >= size or not more:
                return found, page_token(*games[-1][::-1]) if more and games else ""
            bound = (games[-1][1], games[-1][0])

    async def _read(
        self, key: str, size: int, bound: tuple[int, str] | None
    ) -> tuple[list[tuple[str, int]], bool]:
        """Up to ``size`` (game, seat time) after ``bound``, and whether more follow."""
        if bound is None:
            rows = await self._redis.zrevrangebyscore(
                key, "+inf", "-inf", start=0, num=size + 1, withscores=True
            )
        else:
            start_ms, last = bound
            pipe = self._redis.pipeline(transaction=False)
            pipe.zrevrangebyscore(key, start_ms, start_ms, withscores=True)
            pipe.zrevrangebyscore(
                key, f"({start_ms}", "-inf", start=0, num=size + 1, withscores=True
            )
            ties, older = await pipe.execute()
            # Ties come in descending id order: those after the last one sent.
            rows = [t for t in ties if t[0].decode() < last] + list(older)
        games = [(g.decode(), int(score)) for g, score in rows]
        return games[:size], len(games) > size
