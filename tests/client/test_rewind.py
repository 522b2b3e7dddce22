"""TrucClient.watch_game (and a Play session) after Redis lost its last writes:
the game is back a few versions (as after a crash with ``appendfsync
everysec``), and a watch after a version that no longer exists must follow the
server back instead of waiting, silent, until the game passes that version
again.

The loss is simulated on the real Redis of a real game service: every key of the
game is copied (DUMP) at one version and put back (DEL + RESTORE) later."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import grpc
import pytest
import redis.asyncio
from truc.v1 import game_service_pb2, game_service_pb2_grpc

from tests.service.conftest import SECRET, Replica, create_game, new_players, redis_server  # noqa: F401
from tests.service.rewind import Rewind
from truc_bots import HeuristicPolicy
from truc_client.client import TrucClient
from truc_client.session import Update
from truc_dev_redis import RedisServer
from truc_service.tokens import issue_token

if TYPE_CHECKING:
    from truc.v1.game_service_pb2_grpc import GameServiceAsyncStub

BEFORE = 3
"""Versions played before the snapshot..."""
LOST = 4
"""...and after it, lost when it is restored."""
WAIT = 10.0
"""Seconds a watch may take to yield its next version (it takes milliseconds)."""

SPECTATOR = (
    ("authorization", "Bearer " + issue_token(SECRET, "rewind-spectator", role="spectator")),
)


@pytest.fixture(scope="module")
def game_service(redis_server: RedisServer) -> Iterator[Replica]:  # noqa: F811
    replica = Replica(redis_server.url)
    yield replica
    replica.stop()


@dataclass
class Game:
    """A game being played on the service, a seat's client, and its Redis keys."""

    name: str
    tokens: list[str]
    stub: GameServiceAsyncStub
    client: TrucClient
    rewind: Rewind
    policies: list[HeuristicPolicy]

    async def advance(self, count: int) -> int:
        """Play ``count`` actions (the seat to act's, from the server's view); the version."""
        request = game_service_pb2.GetGameRequest(name=self.name)
        for _ in range(count):
            view = (await self.stub.GetGame(request, metadata=SPECTATOR, timeout=10)).game
            seat = view.to_act
            metadata = (("authorization", f"Bearer {self.tokens[seat]}"),)
            mine = (await self.stub.GetGame(request, metadata=metadata, timeout=10)).game
            await self.stub.SubmitAction(
                game_service_pb2.SubmitActionRequest(
                    name=self.name,
                    action=self.policies[seat].choose(mine),
                    etag=mine.etag,
                    request_id=uuid.uuid4().hex,
                ),
                metadata=metadata,
                timeout=10,
            )
        return await self.rewind.version()


@contextlib.asynccontextmanager
async def new_game(replica: Replica, redis_url: str) -> AsyncIterator[Game]:
    """A new game, seat 0's client, and the game played ``BEFORE`` versions."""
    players = new_players()
    with grpc.insecure_channel(replica.address) as channel:
        name = create_game(game_service_pb2_grpc.GameServiceStub(channel), players).name
    tokens = [issue_token(SECRET, player, ttl_seconds=600) for player in players]
    db = redis.asyncio.Redis.from_url(redis_url)
    aio_channel = grpc.aio.insecure_channel(replica.address)
    try:
        async with TrucClient(replica.address, replica.address) as client:
            client.use_token(tokens[0])
            game = Game(
                name,
                tokens,
                game_service_pb2_grpc.GameServiceStub(aio_channel),
                client,
                Rewind(db, name),
                [HeuristicPolicy(90 + seat) for seat in range(6)],
            )
            await game.advance(BEFORE)
            yield game
    finally:
        await aio_channel.close(None)
        await db.aclose()


async def _next(
    stream: AsyncGenerator[game_service_pb2.WatchGameResponse, None],
) -> game_service_pb2.WatchGameResponse:
    try:
        return await asyncio.wait_for(anext(stream), WAIT)
    except TimeoutError:
        raise AssertionError(f"the watch yielded nothing within {WAIT:g} s") from None


def test_a_watch_resumed_after_a_lost_version_follows_the_server_back(
    game_service: Replica,
    redis_server: RedisServer,  # noqa: F811
) -> None:
    async def main() -> tuple[int, int, list[game_service_pb2.WatchGameResponse]]:
        async with new_game(game_service, redis_server.url) as game:
            snapshot = await game.rewind.snapshot()
            lost = await game.advance(LOST)  # the caller saw this version last...
            await game.rewind.restore()  # ...and then the store lost it
            got: list[game_service_pb2.WatchGameResponse] = []
            watch = game.client.watch_game(game.name, after_version=lost)
            async with contextlib.aclosing(watch) as stream:
                got.append(await _next(stream))
                await game.advance(1)
                got.append(await _next(stream))
            return snapshot, lost, got

    snapshot, lost, got = asyncio.run(main())
    assert lost == snapshot + LOST
    current, following = got
    # First the game as it is now (the caller's seat view, of the server's version)...
    assert current.version == snapshot and current.game.etag == str(snapshot)
    assert current.game.seat == 0 and not current.events
    # ...then the versions of its new history.
    assert following.version == snapshot + 1 and following.game.etag == str(snapshot + 1)


# --------------------------------------------------------------------------- a live watch


def _unavailable() -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(
        grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), "dropped", None
    )


class _Call:
    def __init__(self, owner: DroppingStub, call: Any) -> None:
        self._owner = owner
        self._call = call

    async def read(self) -> object:
        if self._owner.drop_next:
            self._owner.drop_next = False
            self._call.cancel()
            raise _unavailable()
        return await self._call.read()

    def cancel(self) -> bool:
        result: bool = self._call.cancel()
        return result


class DroppingStub:
    """The client's game stub, whose WatchGame stream breaks (UNAVAILABLE) at the
    next read once ``drop_next`` is set."""

    def __init__(self, stub: GameServiceAsyncStub) -> None:
        self._stub = stub
        self.GetGame = stub.GetGame
        self.SubmitAction = stub.SubmitAction
        self.drop_next = False

    def WatchGame(self, request: Any, **kwargs: Any) -> _Call:  # noqa: N802
        return _Call(self, self._stub.WatchGame(request, **kwargs))


def test_a_watch_that_drops_after_the_loss_reopens_from_the_servers_version(
    game_service: Replica,
    redis_server: RedisServer,  # noqa: F811
) -> None:
    async def main() -> tuple[int, list[int], list[int]]:
        async with new_game(game_service, redis_server.url) as game:
            dropping = DroppingStub(game.client._game)
            game.client._game = cast("GameServiceAsyncStub", dropping)
            snapshot = await game.rewind.snapshot()
            await game.advance(LOST)
            before: list[int] = []
            after: list[int] = []
            watch = game.client.watch_game(game.name, after_version=snapshot)
            async with contextlib.aclosing(watch) as stream:
                while len(before) < LOST:  # the live stream brings the versions...
                    before.append((await _next(stream)).version)
                await game.rewind.restore()  # ...the store loses them...
                dropping.drop_next = True  # ...and the stream drops
                after.append((await _next(stream)).version)
                await game.advance(1)
                after.append((await _next(stream)).version)
            return snapshot, before, after

    snapshot, before, after = asyncio.run(main())
    assert before == list(range(snapshot + 1, snapshot + LOST + 1))
    assert after == [snapshot, snapshot + 1]


def test_a_quiet_watch_notices_the_loss_within_its_idle_timeout(
    game_service: Replica,
    redis_server: RedisServer,  # noqa: F811
) -> None:
    """The stream stays open (the service does not know the watcher is behind):
    after ``idle_timeout`` seconds without a version the client asks the server."""

    async def main() -> tuple[int, list[int], Sequence[str]]:
        async with new_game(game_service, redis_server.url) as game:
            snapshot = await game.rewind.snapshot()
            await game.advance(LOST)
            versions: list[int] = []
            watch = game.client.watch_game(game.name, after_version=snapshot, idle_timeout=0.5)
            async with contextlib.aclosing(watch) as stream:
                for _ in range(LOST):
                    versions.append((await _next(stream)).version)
                await game.rewind.restore()
                await game.advance(1)  # a new version, below the last one yielded
                current = await _next(stream)
                await game.advance(1)
                following = await _next(stream)
            versions += [current.version, following.version]
            return snapshot, versions, [current.game.etag, following.game.etag]

    snapshot, versions, etags = asyncio.run(main())
    lost = list(range(snapshot + 1, snapshot + LOST + 1))
    assert versions == [*lost, snapshot + 1, snapshot + 2]
    assert etags == [str(snapshot + 1), str(snapshot + 2)]


# --------------------------------------------------------------------------- a session


def test_a_session_resumed_after_a_lost_version_follows_the_server_back(
    game_service: Replica,
    redis_server: RedisServer,  # noqa: F811
) -> None:
    """The same loss under a Play session: opened after the lost version, it
    yields the game as it is now (``rewound``, no events), then the versions of
    its new history, and the seat can act on the server's view."""

    async def main() -> tuple[int, int, list[Update], Update]:
        async with new_game(game_service, redis_server.url) as game:
            snapshot = await game.rewind.snapshot()
            lost = await game.advance(LOST)
            await game.rewind.restore()
            got: list[Update] = []
            async with game.client.session(game.name, after_version=lost) as session:
                got.append(await asyncio.wait_for(anext(session), WAIT))
                await game.advance(1)
                got.append(await asyncio.wait_for(anext(session), WAIT))
                # Seat 0 acts on the server's view once it is its turn.
                view = got[-1].view
                while view.to_act != 0:
                    await game.advance(1)
                    view = (await asyncio.wait_for(anext(session), WAIT)).view
                answer = await session.act(game.policies[0].choose(view), etag=view.etag)
            return snapshot, lost, got, answer

    snapshot, lost, got, answer = asyncio.run(main())
    assert lost == snapshot + LOST
    current, following = got
    assert current.rewound and current.version == snapshot and not current.events
    assert current.view.etag == str(snapshot) and current.view.seat == 0
    assert not following.rewound and following.from_version == following.version == snapshot + 1
    assert answer.version > snapshot + 1 and answer.request_id
