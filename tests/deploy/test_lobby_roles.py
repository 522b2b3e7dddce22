"""TRUC_LOBBY_ROLE through real processes: two ``api`` lobbies match a lone human
with bots but never play them; a separate ``bots`` process (the Kubernetes bots
Deployment) plays those seats to the end of the match and serves no LobbyService."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import grpc
import pytest
from truc.v1 import game_pb2, lobby_service_pb2, lobby_service_pb2_grpc

from tests.lobby_service.aio_lobby import MATCHED, AioStack, purge_lobby_queue, unique_options
from tests.lobby_service.conftest import Stack, start_stack
from tests.service.conftest import Replica, redis_server  # noqa: F401
from truc_bots import BotPlayer, HeuristicPolicy
from truc_dev_redis import RedisServer
from truc_lobby.config import ConfigError, Settings

MATCH_TIMEOUT = 90.0


@pytest.fixture(scope="module")
def api_stack(redis_server: RedisServer) -> Iterator[Stack]:  # noqa: F811
    """A game service and two lobbies with role ``api`` that fill tables with bots after 1 s."""
    purge_lobby_queue(redis_server.url)
    started = start_stack(
        redis_server.url,
        TRUC_LOBBY_ROLE="api",
        TRUC_BOT_WAIT_SECONDS="1",
        TRUC_MATCH_INTERVAL_MS="50",
    )
    yield started
    started.stop()


def test_the_role_is_read_from_the_environment() -> None:
    base = {"REDIS_URL": "redis://127.0.0.1:1/0", "TRUC_DEV_MODE": "1"}
    assert Settings.from_env(base).role == "all"
    api = Settings.from_env({**base, "TRUC_LOBBY_ROLE": "api"})
    assert (api.serves_api, api.plays_bots) == (True, False)
    bots = Settings.from_env({**base, "TRUC_LOBBY_ROLE": "BOTS"})
    assert (bots.serves_api, bots.plays_bots) == (False, True)
    with pytest.raises(ConfigError, match="TRUC_LOBBY_ROLE"):
        Settings.from_env({**base, "TRUC_LOBBY_ROLE": "worker"})


async def _stalled_then_played(stack: Stack, redis_url: str) -> None:
    aio = AioStack(stack)
    bots_process: Replica | None = None
    try:
        human = await aio.sign_in("alone")
        ticket = await aio.create(human, options=unique_options())
        matched = await aio.wait_state(human, ticket.name, [MATCHED], timeout=15)
        assert sum(a.bot for a in matched.table) == 5
        # The human plays their own seat; with api lobbies only, the bot seats never move.
        human_player = BotPlayer(
            aio.game, matched.game, matched.game_token, HeuristicPolicy(seed=3)
        )
        playing = asyncio.create_task(human_player.run())
        await asyncio.sleep(3.0)
        stalled = await aio.get_game(matched.game_token, matched.game)
        assert not stalled.finished
        assert stalled.HasField("to_act") and stalled.to_act != matched.seat, stalled.to_act
        await asyncio.sleep(1.0)
        assert (await aio.get_game(matched.game_token, matched.game)).etag == stalled.etag
        assert not playing.done()

        # A bots-only lobby process picks the queued bot jobs up and plays them out.
        bots_process = Replica(
            redis_url,
            module="truc_lobby",
            TRUC_LOBBY_ROLE="bots",
            TRUC_LOBBY_PORT="0",
            TRUC_GAME_ADDRESS=stack.game.address,
        )
        final = await asyncio.wait_for(playing, MATCH_TIMEOUT)
        assert final.finished and final.phase == game_pb2.PHASE_MATCH_OVER
        view = await aio.get_game(matched.game_token, matched.game)
        assert not [e for e in view.events if e.HasField("turn_timed_out")]

        # The bots process serves gRPC health (its probes) but no LobbyService.
        with grpc.insecure_channel(bots_process.address) as channel:
            lobby = lobby_service_pb2_grpc.LobbyServiceStub(channel)
            with pytest.raises(grpc.RpcError) as refused:
                lobby.SignInGuest(lobby_service_pb2.SignInGuestRequest(display_name="x"))
            assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED
    finally:
        if bots_process is not None:
            bots_process.stop()
        await aio.close()


def test_api_lobbies_leave_bot_seats_to_a_bots_process(
    api_stack: Stack,
    redis_server: RedisServer,  # noqa: F811
) -> None:
    asyncio.run(_stalled_then_played(api_stack, redis_server.url))
