"""Six :class:`BotPlayer` seats play a match over Play sessions that are cut
under them: every few messages (the call cancelled, the bot told the network
failed), and right after an action was sent, before its answer. Each bot
resumes on the next replica after the last version it received, resending its
unanswered action with the same request id; the match finishes with every
action applied once (one version per action, each request id on one version)
and every version received once, in order."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import grpc
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from tests.service.conftest import SECRET, Replica, create_game, new_players
from truc_bots import BotPlayer, HeuristicPolicy
from truc_service.tokens import issue_token

if TYPE_CHECKING:
    from truc.v1.game_service_pb2_grpc import GameServiceAsyncStub

MATCH_TIMEOUT = 90.0
CUT_ACTION_EVERY = 5
"""Every this many actions a bot sends, its session is cut right after the send."""
SPECTATOR = (("authorization", "Bearer " + issue_token(SECRET, "cut-referee", role="spectator")),)

PlayCall = grpc.aio.StreamStreamCall[game_service_pb2.PlayRequest, game_service_pb2.PlayResponse]


def _cut(what: str) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(
        grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), what, None
    )


@dataclass
class Stream:
    """What one Play stream of a bot carried."""

    after_version: int = -1
    sent: list[str] = field(default_factory=list)
    """Request ids of the actions written on it, in order."""
    covered: list[tuple[int, int]] = field(default_factory=list)
    """(from_version, version) of each new version received, in order."""
    cut: bool = False


class _CutSession:
    def __init__(self, owner: CuttingStub, call: PlayCall, stream: Stream) -> None:
        self._owner = owner
        self._call = call
        self._stream = stream
        self._left = owner.cut_after
        self._broken = False

    def _break(self, what: str) -> grpc.aio.AioRpcError:
        self._broken = True
        self._stream.cut = True
        self._call.cancel()
        return _cut(what)

    async def write(self, request: game_service_pb2.PlayRequest) -> None:
        if self._broken:
            raise _cut("the test cut the session")
        if request.HasField("open"):
            self._stream.after_version = request.open.after_version
        await self._call.write(request)
        if request.HasField("action"):
            self._stream.sent.append(request.action.request_id)
            self._owner.actions_sent += 1
            if self._owner.actions_sent % CUT_ACTION_EVERY == 0:
                self._break("the test cut the session with an action in flight")

    async def read(self) -> object:
        if self._broken:
            raise _cut("the test cut the session")
        if self._left == 0:
            raise self._break("the test cut the session")
        self._left -= 1
        message = await self._call.read()
        if isinstance(message, game_service_pb2.PlayResponse):
            self._owner.note(self._stream, message)
        return message

    async def done_writing(self) -> None:
        await self._call.done_writing()

    def cancel(self) -> bool:
        return self._call.cancel()


class CuttingStub:
    """The real stubs of every replica for one bot: each Play session opens on
    the next replica and is cut after ``cut_after`` messages, or right after
    every :data:`CUT_ACTION_EVERY`-th action sent."""

    def __init__(self, stubs: Sequence[GameServiceAsyncStub], first: int, cut_after: int) -> None:
        self._stubs = stubs
        self._next = first
        self.cut_after = cut_after
        self.GetGame = stubs[first % len(stubs)].GetGame
        self.streams: list[Stream] = []
        self.replicas: list[int] = []
        """The replica of each stream opened."""
        self.actions_sent = 0
        self.produced: dict[str, set[int]] = {}
        """Request id -> the versions the server said it produced (applied or repeated)."""
        self.refused: set[str] = set()
        """Request ids the server refused (at least once)."""

    def Play(self, **kwargs: Any) -> _CutSession:  # noqa: N802 - the stub's method name
        replica = self._next % len(self._stubs)
        self._next += 1
        self.replicas.append(replica)
        self.streams.append(Stream())
        return _CutSession(self, self._stubs[replica].Play(**kwargs), self.streams[-1])

    def note(self, stream: Stream, message: game_service_pb2.PlayResponse) -> None:
        if message.HasField("refused"):
            self.refused.add(message.request_id)
        elif message.request_id:
            self.produced.setdefault(message.request_id, set()).add(message.version)
        if message.HasField("game"):
            stream.covered.append((message.from_version, message.version))

    async def SubmitAction(self, *args: Any, **kwargs: Any) -> Any:  # noqa: N802
        raise AssertionError("a session bot made a unary SubmitAction call")

    def WatchGame(self, *args: Any, **kwargs: Any) -> Any:  # noqa: N802
        raise AssertionError("a session bot opened a WatchGame stream")


async def _cut_match(
    replicas: Sequence[Replica], name: str, tokens: Sequence[str]
) -> tuple[list[game_pb2.GameView], list[BotPlayer], list[CuttingStub], game_pb2.GameView]:
    channels = [grpc.aio.insecure_channel(r.address) for r in replicas]
    try:
        stubs: list[GameServiceAsyncStub] = [
            game_service_pb2_grpc.GameServiceStub(c) for c in channels
        ]
        cutting = [CuttingStub(stubs, seat, cut_after=4 + seat) for seat in range(6)]
        bots = [
            BotPlayer(cutting[seat], name, tokens[seat], HeuristicPolicy(60 + seat), backoff=0.01)
            for seat in range(6)
        ]
        finals = await asyncio.wait_for(asyncio.gather(*(b.run() for b in bots)), MATCH_TIMEOUT)
        referee = await stubs[0].GetGame(
            game_service_pb2.GetGameRequest(name=name), metadata=SPECTATOR, timeout=10
        )
        return list(finals), bots, cutting, referee.game
    finally:
        for channel in channels:
            await channel.close(None)


def test_bots_resume_cut_sessions_and_every_action_is_applied_once(
    replicas: list[Replica],
) -> None:
    players = new_players()
    with grpc.insecure_channel(replicas[0].address) as channel:
        created = create_game(game_service_pb2_grpc.GameServiceStub(channel), players)
    first = int(created.game.etag)
    tokens = [issue_token(SECRET, player, ttl_seconds=600) for player in players]

    finals, bots, cutting, referee = asyncio.run(_cut_match(replicas, created.name, tokens))

    # The match finished, every seat saw its end.
    last = int(referee.etag)
    assert referee.finished and referee.phase == game_pb2.PHASE_MATCH_OVER
    for seat, final in enumerate(finals):
        assert final.seat == seat and final.finished and final.etag == referee.etag
    # The sessions were cut, with actions in flight, and resumed on both replicas.
    cuts = sum(s.cut for c in cutting for s in c.streams)
    assert cuts >= 12 and sum(b.reconnects for b in bots) >= cuts
    resent = [
        rid
        for c in cutting
        for before, after in zip(c.streams, c.streams[1:], strict=False)
        for rid in after.sent[:1]
        if rid in before.sent
    ]
    assert resent, "no action was resent with its request id on a resumed session"
    assert all(set(c.replicas) == {0, 1} for c in cutting)
    # One version per action: the versions after the game's creation are exactly
    # the bots' actions, each request id produced one version, no version two.
    unanswered = [
        (seat, rid)
        for seat, c in enumerate(cutting)
        for rid in {r for stream in c.streams for r in stream.sent} - set(c.produced)
        if rid not in c.refused
    ]
    assert sum(b.actions for b in bots) == last - first, f"never answered: {unanswered}"
    produced = [versions for c in cutting for versions in c.produced.values()]
    assert all(len(versions) == 1 for versions in produced), produced
    versions = sorted(v for vs in produced for v in vs)
    assert versions == list(range(first + 1, last + 1))
    # (A spectator sees the events of most of them: not the team messages.)
    public = {e.version for e in referee.events if e.version > first}
    assert public <= set(versions) and last in public
    # Each stream brought the versions after the one it resumed from, each once,
    # in order (coalesced or not); the next stream resumed after the last one.
    for c in cutting:
        resumed: int | None = None
        for stream in c.streams:
            if resumed is not None:
                assert stream.after_version == resumed, (resumed, stream)
            seen = stream.after_version
            for since, version in stream.covered:
                assert since == seen + 1 and version >= since, (stream.after_version, stream)
                seen = version
            resumed = seen
    print(f"{last - first} actions, {cuts} cuts, {len(resent)} actions resent")
