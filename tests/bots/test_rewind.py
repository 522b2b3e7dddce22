"""BotPlayer seats after Redis lost its last writes: the game goes back a few
versions under the bots' feet (as after a crash with ``appendfsync everysec``),
and they must follow the server there and finish the game.

The loss is simulated on the real Redis of real game-service processes: every
key of the game is copied (DUMP) at one version and put back (DEL + RESTORE) a
few versions later, at the moment a bot submits an action, so that its request
finds the game where the snapshot left it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import grpc
import pytest
import redis.asyncio
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from tests.service.conftest import (
    SECRET,
    Replica,
    create_fixed_game,
    create_game,
    new_players,
)
from tests.service.rewind import Rewind
from truc_bots import BotPlayer, HeuristicPolicy, StreamCall
from truc_dev_redis import RedisServer
from truc_protocol.views import is_over
from truc_service.tokens import issue_token

if TYPE_CHECKING:
    from truc.v1.game_service_pb2_grpc import GameServiceAsyncStub

SNAPSHOT_AFTER = 5
"""The snapshot is taken at the first submit this many versions after the game
was created..."""
LOST = 4
"""...and restored at the first submit this many versions after the snapshot:
those versions are lost."""
MATCH_TIMEOUT = 90.0
IDLE = 1.0
"""The bots' idle_timeout in the whole-match test: how long a bot whose watch
went silent waits before it asks the server where the game is (20 s by
default). A bot that was not refused anything cannot learn of the loss sooner."""

SPECTATOR = (
    ("authorization", "Bearer " + issue_token(SECRET, "rewind-referee", role="spectator")),
)


class Rewinder:
    """Snapshots the game at the first submit with an etag of at least
    ``snapshot_at``, and puts it back there at the first submit ``lost``
    versions later, before that request reaches the service. A submit comes
    from the seat to act, so the game is not moving when either happens."""

    def __init__(self, rewind: Rewind, snapshot_at: int, lost: int) -> None:
        self._rewind = rewind
        self._snapshot_at = snapshot_at
        self._lost = lost
        self.snapshot: int | None = None
        """The version of the snapshot."""
        self.rewound: tuple[int, int] | None = None
        """The game's versions just before and just after the rewind."""
        self._lock = asyncio.Lock()

    async def before_submit(self, etag: str) -> None:
        version = int(etag) if etag.isdigit() else -1
        async with self._lock:
            if self.snapshot is None:
                if version >= self._snapshot_at:
                    self.snapshot = await self._rewind.snapshot()
            elif self.rewound is None and version >= self.snapshot + self._lost:
                self.rewound = await self._rewind.restore()


class _RewindingSession:
    """A real Play call whose actions let the :class:`Rewinder` act first."""

    def __init__(
        self,
        owner: RewindingStub,
        call: grpc.aio.StreamStreamCall[
            game_service_pb2.PlayRequest, game_service_pb2.PlayResponse
        ],
    ) -> None:
        self._owner = owner
        self._call = call

    async def write(self, request: game_service_pb2.PlayRequest) -> None:
        owner = self._owner
        if request.HasField("open"):
            owner.watched.append((request.open.after_version, owner.rewinder.rewound is not None))
        elif request.HasField("action"):
            await owner.rewinder.before_submit(request.action.etag)
            if owner.rewinder.rewound is not None:
                owner.sent_after_rewind.add(request.action.request_id)
        await self._call.write(request)

    async def read(self) -> object:
        message = await self._call.read()
        owner = self._owner
        if (
            isinstance(message, game_service_pb2.PlayResponse)
            and message.request_id in owner.sent_after_rewind
            and not message.HasField("refused")
        ):
            owner.sent_after_rewind.discard(message.request_id)  # answered once
            owner.applied_after_rewind += 1
        return message

    async def done_writing(self) -> None:
        await self._call.done_writing()

    def cancel(self) -> bool:
        return self._call.cancel()


class RewindingStub:
    """A real game stub whose actions (SubmitAction calls, or actions on a Play
    session) let the :class:`Rewinder` act first; it also notes the
    ``after_version`` of every WatchGame or Play session it opens."""

    def __init__(self, stub: GameServiceAsyncStub, rewinder: Rewinder) -> None:
        self._stub = stub
        self.rewinder = rewinder
        self.GetGame = stub.GetGame
        self.watched: list[tuple[int, bool]] = []
        """Each stream opened: its after_version, and whether the rewind had struck."""
        self.applied_after_rewind = 0
        """Actions the service applied that were sent after the rewind."""
        self.sent_after_rewind: set[str] = set()
        """Request ids of session actions sent after the rewind, not yet applied."""

    def WatchGame(  # noqa: N802 - the stub's method name
        self, request: game_service_pb2.WatchGameRequest, **kwargs: Any
    ) -> StreamCall:
        self.watched.append((request.after_version, self.rewinder.rewound is not None))
        call: StreamCall = self._stub.WatchGame(request, **kwargs)
        return call

    def Play(self, **kwargs: Any) -> _RewindingSession:  # noqa: N802 - the stub's method name
        return _RewindingSession(self, self._stub.Play(**kwargs))

    async def SubmitAction(  # noqa: N802 - the stub's method name
        self, request: game_service_pb2.SubmitActionRequest, **kwargs: Any
    ) -> game_service_pb2.SubmitActionResponse:
        await self.rewinder.before_submit(request.etag)
        reply: game_service_pb2.SubmitActionResponse = await self._stub.SubmitAction(
            request, **kwargs
        )
        if self.rewinder.rewound is not None:
            self.applied_after_rewind += 1
        return reply


# --------------------------------------------------------------------------- six bots


async def _six_bots(
    replicas: Sequence[Replica],
    redis_url: str,
    name: str,
    first: int,
    tokens: Sequence[str],
    *,
    session: bool,
) -> tuple[list[game_pb2.GameView], list[BotPlayer], game_pb2.GameView, Rewinder]:
    db = redis.asyncio.Redis.from_url(redis_url)
    channels = [grpc.aio.insecure_channel(r.address) for r in replicas]
    try:
        stubs: list[GameServiceAsyncStub] = [
            game_service_pb2_grpc.GameServiceStub(c) for c in channels
        ]
        rewinder = Rewinder(Rewind(db, name), first + SNAPSHOT_AFTER, LOST)
        bots = [
            BotPlayer(
                RewindingStub(stubs[seat % len(stubs)], rewinder),
                name,
                tokens[seat],
                HeuristicPolicy(40 + seat),
                session=session,
                backoff=0.01,
                idle_timeout=IDLE,
            )
            for seat in range(6)
        ]
        finals = await asyncio.wait_for(asyncio.gather(*(b.run() for b in bots)), MATCH_TIMEOUT)
        referee = await stubs[0].GetGame(
            game_service_pb2.GetGameRequest(name=name), metadata=SPECTATOR, timeout=10
        )
        return list(finals), bots, referee.game, rewinder
    finally:
        for channel in channels:
            await channel.close(None)
        await db.aclose()


MODES = pytest.mark.parametrize("session", [True, False], ids=["session", "unary"])


@MODES
def test_six_bots_finish_a_match_after_redis_loses_its_last_writes(
    replicas: list[Replica], redis_server: RedisServer, session: bool
) -> None:
    players = new_players()
    with grpc.insecure_channel(replicas[0].address) as channel:
        created = create_game(game_service_pb2_grpc.GameServiceStub(channel), players)
    first = int(created.game.etag)
    tokens = [issue_token(SECRET, player, ttl_seconds=600) for player in players]

    finals, bots, referee, rewinder = asyncio.run(
        _six_bots(replicas, redis_server.url, created.name, first, tokens, session=session)
    )

    # The game did go back LOST versions...
    assert rewinder.snapshot is not None and rewinder.rewound is not None
    assert rewinder.rewound == (rewinder.snapshot + LOST, rewinder.snapshot)
    # ...and the bots followed it there and played on to the end of the match.
    assert referee.finished and referee.phase == game_pb2.PHASE_MATCH_OVER
    assert int(referee.etag) > rewinder.snapshot + LOST
    for seat, final in enumerate(finals):
        assert final.seat == seat
        assert final.finished and final.winner == referee.winner
        assert final.etag == referee.etag
    # Every action was applied once: the lost ones, then those of the new history.
    assert sum(bot.actions for bot in bots) == int(referee.etag) - first + LOST
    assert not [e for e in referee.events if e.HasField("turn_timed_out")]


# --------------------------------------------------------------------------- one bot


async def _drive(
    stub: GameServiceAsyncStub,
    name: str,
    tokens: Sequence[str],
    bot_seat: int,
) -> game_pb2.GameView:
    """Play every seat but ``bot_seat`` from the server's current view, until the end."""
    policies = [HeuristicPolicy(70 + seat) for seat in range(6)]
    request = game_service_pb2.GetGameRequest(name=name)
    while True:
        view = (await stub.GetGame(request, metadata=SPECTATOR, timeout=10)).game
        if is_over(view):
            return view
        if not view.HasField("to_act") or view.to_act == bot_seat:
            await asyncio.sleep(0.005)
            continue
        seat = view.to_act
        metadata = (("authorization", f"Bearer {tokens[seat]}"),)
        mine = (await stub.GetGame(request, metadata=metadata, timeout=10)).game
        if not mine.HasField("to_act") or mine.to_act != seat:
            continue  # the game moved between the two reads
        try:
            await stub.SubmitAction(
                game_service_pb2.SubmitActionRequest(
                    name=name,
                    action=policies[seat].choose(mine),
                    etag=mine.etag,
                    request_id=uuid.uuid4().hex,
                ),
                metadata=metadata,
                timeout=10,
            )
        except grpc.aio.AioRpcError as error:
            if error.code() not in (grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION):
                raise


async def _one_bot(
    address: str,
    redis_url: str,
    name: str,
    first: int,
    tokens: Sequence[str],
    *,
    seat: int,
    session: bool,
) -> tuple[game_pb2.GameView, game_pb2.GameView, RewindingStub, Rewinder]:
    db = redis.asyncio.Redis.from_url(redis_url)
    channel = grpc.aio.insecure_channel(address)
    try:
        stub: GameServiceAsyncStub = game_service_pb2_grpc.GameServiceStub(channel)
        rewinder = Rewinder(Rewind(db, name), first + SNAPSHOT_AFTER, LOST)
        watched = RewindingStub(stub, rewinder)
        # No idle resynchronisation within the test: only the refusal can tell the
        # bot where the game went, and its watch must follow from there.
        bot = BotPlayer(
            watched,
            name,
            tokens[seat],
            HeuristicPolicy(seat),
            session=session,
            backoff=0.01,
            idle_timeout=600,
        )
        final, referee = await asyncio.wait_for(
            asyncio.gather(bot.run(), _drive(stub, name, tokens, seat)), MATCH_TIMEOUT / 3
        )
        return final, referee, watched, rewinder
    finally:
        await channel.close(None)
        await db.aclose()


@MODES
def test_a_refused_bot_adopts_the_older_view_and_watches_from_there(
    replicas: list[Replica], redis_server: RedisServer, session: bool
) -> None:
    """The bot acting when the loss strikes gets STALE_ETAG for a version that is
    gone: it takes the server's older view, reopens its session (or watch)
    after the server's version (one after the lost version would stay silent
    until the game passed it again) and plays the deal out with the others."""
    seat = 2
    players = new_players()
    with grpc.insecure_channel(replicas[0].address) as channel:
        created = create_fixed_game(game_service_pb2_grpc.GameServiceStub(channel), players)
    first = int(created.game.etag)
    tokens = [issue_token(SECRET, player, ttl_seconds=600) for player in players]

    final, referee, watched, rewinder = asyncio.run(
        _one_bot(
            replicas[0].address,
            redis_server.url,
            created.name,
            first,
            tokens,
            seat=seat,
            session=session,
        )
    )

    assert rewinder.snapshot is not None and rewinder.rewound is not None
    before, after = rewinder.rewound
    assert before >= rewinder.snapshot + LOST and after == rewinder.snapshot
    # Its first watch after the refusal starts at the server's version, not after a
    # version the game lost (the others may have played on a little meanwhile).
    reopened = [version for version, late in watched.watched if late]
    assert reopened and after <= reopened[0] < before, watched.watched
    assert watched.applied_after_rewind >= 2, "the bot got (almost) nothing through after it"
    assert is_over(referee) and int(referee.etag) > before
    assert final.etag == referee.etag and final.seat == seat
