"""An in-memory stand-in for the game service's ``Play`` and ``GetGame``, for
unit tests of :class:`truc_client.session.GameSession` (no sockets).

A game is a counter of versions: version ``v``'s view has etag ``v`` and one
event of version ``v``; ``to_act`` goes round the seats; it finishes at
``last``. The stand-in follows the protocol of ``GameService.Play`` (the
proto's comments): one message per version (or coalesced, ``coalesce``),
``request_id`` on the version an action of the session produced, refusals
with their code and reason, ``repeated`` for a request id applied before, the
stream ending OK after the last version. Tests break streams, lose answers,
and rewind the game (the store lost writes) through its methods."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
from grpc.aio import EOF  # type: ignore[attr-defined]
from truc.v1 import game_pb2, game_service_pb2


def view(version: int, *, seat: int = 0, seats: int = 2, last: int = 10) -> game_pb2.GameView:
    over = version >= last
    shown = game_pb2.GameView(
        name="games/g1",
        seat=seat,
        etag=str(version),
        phase=game_pb2.PHASE_MATCH_OVER if over else game_pb2.PHASE_PLAY,
        finished=over,
    )
    if not over:
        shown.to_act = (version - 1) % seats
    return shown


def _error(code: grpc.StatusCode, details: str) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details, None)


class FakeCall:
    """One ``Play`` stream: what the client writes goes to the game; what the game
    sends is read from a queue."""

    def __init__(self, game: FakeGame, seat: int) -> None:
        self.game = game
        self.seat = seat
        self.opened_after: int | None = None
        self.written: list[game_service_pb2.PlayRequest] = []
        self._out: asyncio.Queue[object] = asyncio.Queue()
        self.cancelled = False
        self.ended = False
        self.closed = False
        """The server ended the stream (the client may not have read it yet)."""

    async def write(self, request: game_service_pb2.PlayRequest) -> None:
        if self.cancelled or self.ended or self.closed:
            raise asyncio.InvalidStateError("RPC already finished.")
        self.written.append(request)
        self.game.handle(self, request)

    async def read(self) -> object:
        if self.cancelled:
            raise asyncio.CancelledError()
        item = await self._out.get()
        if isinstance(item, BaseException):
            raise item
        if item is EOF:
            self.ended = True
        return item

    def cancel(self) -> bool:
        if self.cancelled or self.ended:
            return False
        self.cancelled = True
        self._out.put_nowait(asyncio.CancelledError())
        return True

    def send(self, message: game_service_pb2.PlayResponse) -> None:
        if not (self.cancelled or self.ended or self.closed):
            self._out.put_nowait(message)

    def end(self, error: BaseException | None = None) -> None:
        if not (self.cancelled or self.ended or self.closed):
            self.closed = True
            self._out.put_nowait(EOF if error is None else error)


@dataclass
class FakeGame:
    """The game and its sessions (see the module)."""

    seats: int = 2
    last: int = 10
    version: int = 1
    coalesce: bool = False
    applied: dict[str, int] = field(default_factory=dict)
    """request id -> the version it produced."""
    refuse_next: tuple[int, str] | None = None
    """(code, reason) the next action is refused with."""
    lose_next_answer: bool = False
    """The next action is applied, then its stream breaks before the answer."""
    calls: list[FakeCall] = field(default_factory=list)
    gets: int = 0
    submits: list[str] = field(default_factory=list)
    """The request ids of the unary SubmitAction calls."""
    on_open: Callable[[FakeCall], None] | None = None

    # -- the stub's surface

    def Play(self, *, metadata: Any = None, **_: Any) -> FakeCall:  # noqa: N802
        seat = int(dict(metadata or ())["authorization"].rsplit("seat", 1)[1])
        call = FakeCall(self, seat)
        self.calls.append(call)
        return call

    async def GetGame(  # noqa: N802
        self, request: game_service_pb2.GetGameRequest, *, metadata: Any = None, **_: Any
    ) -> game_service_pb2.GetGameResponse:
        self.gets += 1
        seat = int(dict(metadata or ())["authorization"].rsplit("seat", 1)[1])
        return game_service_pb2.GetGameResponse(game=self.view(self.version, seat))

    async def SubmitAction(  # noqa: N802
        self, request: game_service_pb2.SubmitActionRequest, *, metadata: Any = None, **_: Any
    ) -> game_service_pb2.SubmitActionResponse:
        """Only what a session asks of it: the replay of an applied request id."""
        self.submits.append(request.request_id)
        seat = int(dict(metadata or ())["authorization"].rsplit("seat", 1)[1])
        if request.request_id in self.applied:
            version = self.applied[request.request_id]
            return game_service_pb2.SubmitActionResponse(game=self.view(version, seat))
        if self.version >= self.last:
            raise _error(grpc.StatusCode.FAILED_PRECONDITION, "GAME_OVER")
        raise NotImplementedError("the stand-in only replays")

    # -- the game

    def view(self, version: int, seat: int) -> game_pb2.GameView:
        return view(version, seat=seat, seats=self.seats, last=self.last)

    def message(
        self, seat: int, first: int, version: int, request_id: str = ""
    ) -> game_service_pb2.PlayResponse:
        return game_service_pb2.PlayResponse(
            version=version,
            from_version=first,
            events=[game_pb2.Event(version=v) for v in range(first, version + 1)],
            game=self.view(version, seat),
            request_id=request_id,
        )

    def live(self) -> list[FakeCall]:
        return [c for c in self.calls if c.opened_after is not None and not c.cancelled]

    def handle(self, call: FakeCall, request: game_service_pb2.PlayRequest) -> None:
        if request.HasField("open"):
            after = request.open.after_version
            call.opened_after = after
            if self.on_open is not None:
                self.on_open(call)
            if after < self.version:
                if self.coalesce:
                    call.send(self.message(call.seat, after + 1, self.version))
                else:
                    for v in range(after + 1, self.version + 1):
                        call.send(self.message(call.seat, v, v))
            if self.version >= self.last:
                call.end()
            return
        action = request.action
        rid = action.request_id
        if rid in self.applied:
            call.send(
                game_service_pb2.PlayResponse(
                    version=self.applied[rid], request_id=rid, repeated=True
                )
            )
            return
        refusal = self.refuse_next
        if refusal is None and action.etag and action.etag != str(self.version):
            refusal = (grpc.StatusCode.ABORTED.value[0], "STALE_ETAG")
        if refusal is None and (self.version - 1) % self.seats != call.seat:
            refusal = (grpc.StatusCode.FAILED_PRECONDITION.value[0], "NOT_YOUR_TURN")
        if refusal is not None:
            self.refuse_next = None
            call.send(
                game_service_pb2.PlayResponse(
                    version=self.version,
                    request_id=rid,
                    refused=game_service_pb2.ActionRefused(
                        code=refusal[0], reason=refusal[1], message="refused"
                    ),
                )
            )
            return
        self.advance(rid, by=call)

    def advance(self, request_id: str = "", by: FakeCall | None = None) -> None:
        """A new version (by ``by``'s action, or by someone else)."""
        self.version += 1
        if request_id:
            self.applied[request_id] = self.version
        lose = by is not None and self.lose_next_answer
        self.lose_next_answer = False
        for call in self.live():
            if call is by and lose:
                call.end(_error(grpc.StatusCode.UNAVAILABLE, "the replica went away"))
                continue
            mine = request_id if call is by else ""
            call.send(self.message(call.seat, self.version, self.version, mine))
            if self.version >= self.last:
                call.end()

    def rewind(self, to: int) -> None:
        """The store lost every version after ``to``."""
        self.version = to
        self.applied = {k: v for k, v in self.applied.items() if v <= to}

    def break_streams(self) -> None:
        for call in self.live():
            call.end(_error(grpc.StatusCode.UNAVAILABLE, "connection reset"))


def metadata(seat: int) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer seat{seat}"),)
