"""ListGames filtered by rule set (truc_lobby.history.GameHistory.page) on a real
Redis: pages hold only that rule set's games, most recent first, and the
tokens walk the whole history; one call reads a bounded number of games."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis as AsyncRedis

from tests.service.conftest import redis_server  # noqa: F401
from truc_dev_redis import RedisServer
from truc_lobby import history as history_module
from truc_lobby.history import GameHistory, GameRecord, history_key, summary_key
from truc_rules.rule_set import RuleSet

_ORDER = (RuleSet.FRENCH_TRUC, RuleSet.TRUC_Y_FLOU, RuleSet.FRENCH_TRUC, RuleSet.CATALAN_TRUC)


async def _fill(redis: AsyncRedis, player: str, games: int) -> list[GameRecord]:
    """``games`` records of ``player``, ending one ms apart, the rule sets in turn."""
    records = [
        GameRecord(
            game=f"filter-{player}-{i:03d}",
            seats=((0, player, False), (1, "bot", True)),
            winner=0,
            end_ms=1_000 + i,
            changes={},
            rule_set=_ORDER[i % len(_ORDER)],
        )
        for i in range(games)
    ]
    pipe = redis.pipeline(transaction=False)
    for record in records:
        pipe.set(summary_key(record.game), record.encode())
        pipe.zadd(history_key(player), {record.game: record.end_ms})
    await pipe.execute()
    return records[::-1]  # most recent first


async def _walk(
    history: GameHistory, player: str, size: int, rule_set: RuleSet | None
) -> list[list[str]]:
    pages: list[list[str]] = []
    token = ""
    while True:
        records, token = await history.page(player, size, token, rule_set)
        pages.append([r.game for r in records])
        if not token:
            return pages


def test_a_filtered_history_pages_through_one_rule_set(redis_server: RedisServer) -> None:  # noqa: F811
    async def main() -> None:
        redis = AsyncRedis.from_url(redis_server.url)
        try:
            everything = await _fill(redis, "ana", 30)
            history = GameHistory(redis)
            french = [r.game for r in everything if r.rule_set == RuleSet.FRENCH_TRUC]
            pages = await _walk(history, "ana", 4, RuleSet.FRENCH_TRUC)
            assert [g for page in pages for g in page] == french
            assert all(len(page) == 4 for page in pages[:-1])
            catalan = await _walk(history, "ana", 100, RuleSet.CATALAN_TRUC)
            assert catalan == [[r.game for r in everything if r.rule_set == RuleSet.CATALAN_TRUC]]
            assert await _walk(history, "ana", 5, RuleSet.SACKSON_TRUC) == [[]]
            unfiltered = await _walk(history, "ana", 7, None)
            assert [g for page in unfiltered for g in page] == [r.game for r in everything]
        finally:
            await redis.aclose()

    asyncio.run(main())


def test_a_filtered_page_reads_a_bounded_number_of_games(
    redis_server: RedisServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(history_module, "SCAN_LIMIT", 10)
    monkeypatch.setattr(history_module, "SCAN_BATCH", 4)

    async def main() -> None:
        redis = AsyncRedis.from_url(redis_server.url)
        try:
            everything = await _fill(redis, "bea", 24)
            history = GameHistory(redis)
            # Sackson has no game: each call stops after 10 games with a token.
            records, token = await history.page("bea", 5, "", RuleSet.SACKSON_TRUC)
            assert records == [] and token
            records, token = await history.page("bea", 5, token, RuleSet.SACKSON_TRUC)
            assert records == [] and token
            records, token = await history.page("bea", 5, token, RuleSet.SACKSON_TRUC)
            assert (records, token) == ([], "")
            # A short page is still followed to the end without losing a game.
            pages = await _walk(history, "bea", 5, RuleSet.FRENCH_TRUC)
            assert [g for page in pages for g in page] == [
                r.game for r in everything if r.rule_set == RuleSet.FRENCH_TRUC
            ]
        finally:
            await redis.aclose()

    asyncio.run(main())
