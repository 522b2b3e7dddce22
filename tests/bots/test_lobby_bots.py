"""The lobby's bot runner plays its bot seats over Play sessions.

A lone human gets five of the lobby's bots and plays the match out with unary
calls (``session=False``, so that its actions are told apart from the bots'):
the game service's metrics then count the human's actions as unary ones and
every other action as one sent on a session, none played by a deadline."""

from __future__ import annotations

import asyncio
import re
import urllib.request
from collections import Counter
from collections.abc import Iterator

import pytest
from truc.v1 import game_pb2

from tests.lobby_service.aio_lobby import MATCHED, AioStack, purge_lobby_queue
from tests.lobby_service.conftest import Stack, start_stack
from tests.service.conftest import redis_server  # noqa: F401
from truc_bots import BotPlayer, HeuristicPolicy
from truc_dev_redis import RedisServer

pytestmark = pytest.mark.integration

MATCH_TIMEOUT = 60.0
_ACTIONS = re.compile(r'^truc_actions_total\{kind="[a-z_]+",origin="([a-z]+)"\} ([0-9.]+)$')


@pytest.fixture(scope="module")
def bot_stack(redis_server: RedisServer) -> Iterator[Stack]:  # noqa: F811
    """A stack of its own whose lobbies fill a table with bots after 1 s."""
    purge_lobby_queue(redis_server.url)
    started = start_stack(redis_server.url, TRUC_BOT_WAIT_SECONDS="1", TRUC_MATCH_INTERVAL_MS="50")
    yield started
    started.stop()


def actions_by_origin(metrics_url: str) -> Counter[str]:
    """The game service's applied actions by origin (player, session, deadline)."""
    with urllib.request.urlopen(metrics_url, timeout=10) as reply:
        text = reply.read().decode()
    counts: Counter[str] = Counter()
    for line in text.splitlines():
        found = _ACTIONS.match(line)
        if found:
            counts[found.group(1)] += int(float(found.group(2)))
    return counts


async def _lone_human(stack: Stack) -> tuple[BotPlayer, game_pb2.GameView]:
    aio = AioStack(stack)
    try:
        human = await aio.sign_in("alone")
        ticket = await aio.create(human)
        matched = await aio.wait_state(human, ticket.name, [MATCHED], timeout=15)
        assert sum(a.bot for a in matched.table) == 5
        player = BotPlayer(
            aio.game, matched.game, matched.game_token, HeuristicPolicy(seed=7), session=False
        )
        final = await asyncio.wait_for(player.run(), MATCH_TIMEOUT)
        assert final.finished and final.phase == game_pb2.PHASE_MATCH_OVER
        return player, await aio.get_game(matched.game_token, matched.game)
    finally:
        await aio.close()


def test_the_lobbys_bots_play_over_sessions(bot_stack: Stack) -> None:
    metrics = bot_stack.game.metrics_url
    assert metrics is not None
    before = actions_by_origin(metrics)
    human, view = asyncio.run(_lone_human(bot_stack))
    after = actions_by_origin(metrics)
    applied = {origin: after[origin] - before[origin] for origin in after}

    assert view.finished
    assert human.actions > 0 and applied["player"] == human.actions, applied
    assert applied["session"] > human.actions, applied  # five bots' worth
    assert applied["deadline"] == 0, applied
