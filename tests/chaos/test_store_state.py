"""The chaos suite reads games as the game service writes them: a game played by the
real service on a real Redis (its Lua scripts, its log records) reads back
consistent, and each damage done to its keys in Redis is reported by the check
that owns it."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from typing import cast

import pytest
import redis
import redis.asyncio as aioredis

from truc_chaos.checks import CheckInput, check_all
from truc_chaos.records import Ack, Journal
from truc_chaos.store_state import read_store
from truc_dev_redis import RedisServer
from truc_game.adapters.redis_keys import Keys
from truc_game.adapters.redis_store import RedisGameStore
from truc_game.ports import RECORD_BYTES
from truc_game.service import GameService, NewGame
from truc_redis.game_ends import ended_stream
from truc_rules.actions import SendDirective, SendSignal
from truc_rules.registry import decode_state, legal_actions
from truc_rules.truc_y_flou import RuleOptions
from truc_service.tokens import Identity

pytestmark = pytest.mark.integration

LOBBY = Identity("truc-lobby", "lobby", 1e12)
PLAYERS = ("ana", "bruno", "carla", "dani", "eva", "fede")
GAME = "chaos-read-1"


@pytest.fixture(scope="module")
def server() -> Iterator[RedisServer]:
    with RedisServer() as started:
        yield started


async def _play(url: str, actions: int) -> tuple[list[Ack], list[bytes]]:
    """GAME played by the service on Redis: the acks of its actions, and the
    state of each version."""
    client = aioredis.Redis.from_url(url)
    store = RedisGameStore(client, ttl_seconds=3600, finished_ttl_seconds=3600)
    game = GameService(
        store,
        turn_seconds=30,
        allow_fixed_deals=False,
        rate_actions=0,
        rate_signals=0,
        rate_window_ms=1000,
    )
    await game.create_game(
        LOBBY,
        NewGame(
            game_id=GAME,
            players=PLAYERS,
            options=RuleOptions(),
            turn_seconds=0,
            dealer=None,
            fixed_deals=(),
            start_scores=(0, 0),
            start_manches=(0, 0),
        ),
    )
    chooser = random.Random(3)
    acks: list[Ack] = []
    states = [(await store.read(GAME)).state]
    for _ in range(actions):
        state = decode_state(states[-1])
        seat = state.to_act
        assert seat is not None
        moves = list(legal_actions(state, seat))
        if chooser.random() < 0.2:
            moves = [m for m in moves if isinstance(m, SendSignal | SendDirective)] or moves
        request_id = f"r{len(acks)}"
        await game.submit_action(
            Identity(PLAYERS[seat], "player", 1e12),
            GAME,
            chooser.choice(moves),
            etag="",
            request_id=request_id,
        )
        snapshot = await store.read(GAME)
        states.append(snapshot.state)
        acks.append(
            Ack(f"games/{GAME}", PLAYERS[seat], seat, request_id, snapshot.version, 0.0, "grpc")
        )
    await client.aclose()
    return acks, states


def _found(url: str, acks: list[Ack]) -> set[str]:
    """What the checks report (but orphan-game: no lobby seated this game)."""
    journal = Journal()
    journal.acks = list(acks)
    violations, _ = check_all(CheckInput(read_store(url), journal))
    return {v.check for v in violations} - {"orphan-game"}


def test_a_game_as_the_service_wrote_it_reads_consistent_and_each_damage_is_found(
    server: RedisServer,
) -> None:
    acks, states = asyncio.run(_play(server.url, 30))
    stored = read_store(server.url).games[GAME]
    assert stored.version == 31 and len(stored.log) == 30 * RECORD_BYTES
    assert stored.created_ms is not None  # version 1's deadline is kept
    assert _found(server.url, acks) == set()

    client = redis.Redis.from_url(server.url)
    keys = Keys(GAME)
    log = cast(bytes, client.get(keys.log))
    try:
        # The current state is not where the log leads.
        client.hset(keys.game, mapping={"s": states[-2]})
        assert _found(server.url, acks) == {"log-replay-mismatch"}
        client.hset(keys.game, mapping={"s": states[-1]})
        # The last record lost: the log is one version short.
        client.set(keys.log, log[:-RECORD_BYTES])
        assert "log-gap" in _found(server.url, acks)
        # Version 10's request id damaged: its acknowledged action is not in the log.
        at = 8 * RECORD_BYTES + RECORD_BYTES - 8
        client.set(keys.log, log[:at] + bytes(8) + log[at + 8 :])
        assert _found(server.url, acks) == {"lost-ack"}
        client.set(keys.log, log)
        # An unfinished game announced as ended.
        client.xadd(ended_stream(keys.shard), {"g": GAME, "w": "A"})
        assert _found(server.url, acks) == {"end-of-unfinished-game"}
    finally:
        client.close()
