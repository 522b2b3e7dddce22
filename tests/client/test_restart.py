"""The client library against a game service that crashes and comes back mid-game.

Six :class:`TrucClient` players are seated through the lobby and play; when
the match is well under way the game service is killed (SIGKILL) and, after
a pause, a new process is started on the same address. The clients' watch
streams drop and their calls fail with UNAVAILABLE meanwhile: they must
retry and resume by themselves, so the match ends with every version seen
once, in order, by every seat. (That a retried request id is applied once
is checked in ``test_client.py`` and ``tests/service/test_failover.py``.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from truc.v1 import game_pb2

from tests.client.test_client import play_seat, seated
from tests.lobby_service.conftest import Stack
from tests.service.conftest import free_port, redis_server  # noqa: F401
from truc_client.client import TrucClient
from truc_dev_redis import RedisServer


@pytest.fixture(scope="module")
def restartable(redis_server: RedisServer) -> Iterator[Stack]:  # noqa: F811
    """A stack whose game service listens on a fixed port, so it can come back there."""
    started = Stack(redis_server.url, game_port=str(free_port()), TRUC_BOT_WAIT_SECONDS="0")
    yield started
    started.stop()


def test_clients_ride_out_a_game_service_restart_mid_game(restartable: Stack) -> None:
    down_seconds = 4.0  # longer than a handful of quick retries would wait

    async def main() -> tuple[list[tuple[game_pb2.GameView, int, list[int]]], int, int]:
        async with seated(restartable, "restart") as table:
            game = table[0][1].game
            players = [
                asyncio.create_task(play_seat(client, game, 40 + ticket.seat))
                for client, ticket in table
            ]
            async with TrucClient(
                restartable.lobbies[0].address, restartable.game.address
            ) as observer:
                observer.use_token(table[0][1].game_token)
                before = 0
                while before < 25:  # the match is under way
                    await asyncio.sleep(0.05)
                    before = int((await observer.get_game(game)).etag)
                assert not any(player.done() for player in players)
                old_pid = restartable.game.process.pid
                await asyncio.to_thread(restartable.restart_game, down_seconds)
                assert restartable.game.process.pid != old_pid
                results = await asyncio.wait_for(asyncio.gather(*players), 60)
                # A fresh read through the new process agrees with what the players saw.
                final = await observer.get_game(game)
            return results, before, int(final.etag)

    results, before, last = asyncio.run(main())
    finals = [view for view, _, _ in results]
    assert all(view.finished and view.phase == game_pb2.PHASE_MATCH_OVER for view in finals)
    assert {int(view.etag) for view in finals} == {last}
    assert last > before + 6  # the match went on well after the crash
    for _, start, versions in results:
        # Every version once and in order across the crash: nothing lost, nothing doubled.
        assert versions == list(range(start + 1, last + 1))
