"""A seat (or spectator) playing over a Play session, for the session tests.

Written from the protocol (proto/truc/v1/game_service.proto), not from the
clients' libraries, so the tests check the server against the contract itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import uuid
from dataclasses import dataclass, field
from typing import Final, cast

import grpc
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from .conftest import Metadata

PlayCall = grpc.aio.StreamStreamCall[game_service_pb2.PlayRequest, game_service_pb2.PlayResponse]
EOF: Final[object] = grpc.aio.EOF  # type: ignore[attr-defined]

MOVES = ("play_card", "call", "choose_dealer", "cut")
"""Actions that move a game on (team messages do not)."""


@dataclass
class Seen:
    """What one session received, over every stream it opened."""

    messages: list[game_service_pb2.PlayResponse] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)
    """The versions covered, in the order received (from_version .. version each)."""
    event_versions: list[int] = field(default_factory=list)
    refused: list[game_service_pb2.PlayResponse] = field(default_factory=list)
    repeated: list[game_service_pb2.PlayResponse] = field(default_factory=list)
    own: dict[str, int] = field(default_factory=dict)
    """request id -> the version it produced (from the messages carrying it)."""
    streams: int = 0
    last: game_pb2.GameView | None = None


def play(channel: grpc.aio.Channel, metadata: Metadata) -> PlayCall:
    """A Play stream on ``channel`` (the stubs type only the request-iterator form)."""
    stub = game_service_pb2_grpc.GameServiceStub(channel)
    return stub.Play(metadata=metadata)  # type: ignore[call-arg]


async def write(call: PlayCall, request: game_service_pb2.PlayRequest) -> None:
    """Write one request; on a stream that is breaking, nothing: the next read
    says how it ended (grpc-aio fails a write that races the end with an
    INTERNAL of its own, not the stream's status)."""
    with contextlib.suppress(asyncio.InvalidStateError, grpc.aio.AioRpcError):
        await call.write(request)


async def receive(call: PlayCall, timeout: float = 10.0) -> game_service_pb2.PlayResponse | None:
    """The stream's next message; None at its end."""
    message = await asyncio.wait_for(call.read(), timeout)
    return None if message is EOF else cast(game_service_pb2.PlayResponse, message)


def open_request(name: str, after: int) -> game_service_pb2.PlayRequest:
    return game_service_pb2.PlayRequest(
        open=game_service_pb2.OpenSession(name=name, after_version=after)
    )


def action_request(
    action: game_pb2.Action, request_id: str, etag: str = ""
) -> game_service_pb2.PlayRequest:
    return game_service_pb2.PlayRequest(
        action=game_service_pb2.SessionAction(action=action, request_id=request_id, etag=etag)
    )


class Player:
    """Plays one seat (``seat`` None: watches) over sessions, resuming on another
    address when a stream breaks, resending its unanswered action."""

    def __init__(
        self,
        name: str,
        metadata: Metadata,
        addresses: list[str],
        *,
        seat: int | None,
        seed: int,
    ) -> None:
        self.name = name
        self.metadata = metadata
        self.addresses = addresses
        self.seat = seat
        self.random = random.Random(seed)
        self.seen = Seen()
        self.after = 0
        self.unanswered: tuple[str, game_pb2.Action] | None = None
        self.cut_after: int | None = None
        """Tests: cancel the stream after this many messages (once)."""
        self.resend_after_cut = False

    def _choose(self, view: game_pb2.GameView) -> game_pb2.Action | None:
        if self.seat is None or view.to_act != self.seat or not view.HasField("to_act"):
            return None
        moves = [a for a in view.legal_actions if a.WhichOneof("kind") in MOVES]
        return self.random.choice(moves) if moves else None

    def _record(self, message: game_service_pb2.PlayResponse) -> None:
        seen = self.seen
        seen.messages.append(message)
        if message.HasField("refused"):
            seen.refused.append(message)
            return
        if message.repeated:  # applied before (a resent action after a cut)
            seen.repeated.append(message)
            seen.own[message.request_id] = message.version
            return
        seen.versions.extend(range(message.from_version, message.version + 1))
        seen.event_versions.extend(e.version for e in message.events)
        if message.request_id:
            seen.own[message.request_id] = message.version
        seen.last = message.game
        self.after = message.version

    async def run(self, timeout: float = 60.0) -> Seen:
        try:
            await asyncio.wait_for(self._run(), timeout)
        except TimeoutError:
            tail = [str(m).replace("\n", " ")[:300] for m in self.seen.messages[-3:]]
            raise AssertionError(
                f"seat {self.seat} stuck after {self.after} (unanswered {self.unanswered}); "
                f"last messages: {tail}"
            ) from None
        return self.seen

    async def _run(self) -> None:
        turn = 0
        while True:
            address = self.addresses[turn % len(self.addresses)]
            turn += 1
            try:
                if await self._stream(address):
                    return
            except grpc.aio.AioRpcError as error:
                if error.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
                    raise
            except asyncio.InvalidStateError:
                pass  # a write to a stream that had just broken: resume
            await asyncio.sleep(0.05)

    async def _stream(self, address: str) -> bool:
        """One stream to its end: True when the match is over."""
        async with grpc.aio.insecure_channel(address) as channel:
            call = play(channel, self.metadata)
            self.seen.streams += 1
            await write(call, open_request(self.name, self.after))
            if self.unanswered is not None:
                request_id, action = self.unanswered
                await write(call, action_request(action, request_id))
            received = 0
            while True:
                message = await receive(call, 30.0)
                if message is None:
                    return True
                self._record(message)
                received += 1
                if self.unanswered is not None and message.request_id == self.unanswered[0]:
                    self.unanswered = None
                if self.cut_after is not None and received >= self.cut_after:
                    self.cut_after = None
                    if self.resend_after_cut and self.unanswered is None and self.seen.last:
                        await self._send_next(call, self.seen.last)
                    call.cancel()
                    return False
                if self.unanswered is None and self.seen.last is not None:
                    await self._send_next(call, self.seen.last)

    async def _send_next(self, call: PlayCall, view: game_pb2.GameView) -> None:
        """Act on the newest view (it may have come before the answer to the
        last action, e.g. when a resent action is answered ``repeated``)."""
        if int(view.etag) != self.after:
            return
        action = self._choose(view)
        if action is None:
            return
        request_id = uuid.uuid4().hex
        self.unanswered = (request_id, action)
        await write(call, action_request(action, request_id, etag=view.etag))


def open_refused(
    address: str, metadata: Metadata, opening: game_service_pb2.OpenSession
) -> grpc.aio.AioRpcError | None:
    """Open a session on ``address``: the error that ended it at once, or None
    if it sent its first message (it is then closed)."""

    async def run() -> grpc.aio.AioRpcError | None:
        async with grpc.aio.insecure_channel(address) as channel:
            call = play(channel, metadata)
            await call.write(game_service_pb2.PlayRequest(open=opening))
            try:
                await receive(call)
            except grpc.aio.AioRpcError as error:
                return error
            call.cancel()
            return None

    return asyncio.run(run())
