"""The :class:`BotPlayer`: one seat of one game played through the public game
API with a :class:`~truc_bots.Policy`, exactly as a player's client would.

By default a bot plays over one ``Play`` session per seat (the game's versions
come in on it and its actions go out on it); ``session=False`` plays as clients
did before sessions, following the game with ``WatchGame`` and acting with unary
``SubmitAction`` calls (kept to compare the two).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Final, Protocol

import grpc
from truc.v1 import game_pb2, game_service_pb2

from truc_protocol.status import TrucError, rate_limit_wait
from truc_protocol.views import game_version, is_over

if TYPE_CHECKING:
    from . import Policy

__all__ = ["BotError", "BotPlayer", "GameCalls", "SessionCall", "StreamCall"]


class BotError(RuntimeError):
    """The bot cannot go on (a refused action it cannot explain, or retries exhausted)."""


class StreamCall(Protocol):
    """What :class:`BotPlayer` does with a WatchGame call: read it, cancel it."""

    async def read(self) -> object:
        """The next message, or ``grpc.aio.EOF``."""
        ...

    def cancel(self) -> bool:
        """Stop the stream."""
        ...


class SessionCall(Protocol):
    """What :class:`BotPlayer` does with a Play call (a ``grpc.aio.StreamStreamCall``)."""

    async def write(self, request: game_service_pb2.PlayRequest) -> None:
        """Send one request (``asyncio.InvalidStateError`` once the call is over)."""
        ...

    async def read(self) -> object:
        """The next message, or ``grpc.aio.EOF``."""
        ...

    async def done_writing(self) -> None:
        """Half-close: nothing more will be sent."""
        ...

    def cancel(self) -> bool:
        """Stop the stream."""
        ...


class GameCalls(Protocol):
    """The GameService calls a :class:`BotPlayer` makes.

    The generated ``GameServiceAsyncStub`` has them; so does a wrapper that
    measures each call (:mod:`truc_client.load`). ``Play`` is called with
    ``metadata=`` only and returns the session's call.
    """

    @property
    def GetGame(self) -> Callable[..., Awaitable[game_service_pb2.GetGameResponse]]: ...  # noqa: N802

    @property
    def SubmitAction(  # noqa: N802
        self,
    ) -> Callable[..., Awaitable[game_service_pb2.SubmitActionResponse]]: ...

    @property
    def WatchGame(self) -> Callable[..., StreamCall]: ...  # noqa: N802

    @property
    def Play(self) -> Callable[..., SessionCall]: ...  # noqa: N802


_RETRY_CODES: Final = frozenset((grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED))
_STREAM_RETRY_CODES: Final = frozenset(
    (
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    )
)
_STATUS_BY_NUMBER: Final[dict[int, grpc.StatusCode]] = {
    code.value[0]: code for code in grpc.StatusCode
}
"""A refusal carries its status code as a number (google.rpc.Code)."""


def _refusal_wait(refused: game_service_pb2.ActionRefused, max_backoff: float) -> float:
    """Seconds to wait before resending after a RATE_LIMITED refusal: what its
    ``retry_after_ms`` asks (at most ``5 * max_backoff``), else ``max_backoff``
    (:func:`truc_protocol.status.rate_limit_wait` for a refusal on a session)."""
    wait = refused.metadata.get("retry_after_ms", "")
    return max_backoff if not wait.isdigit() else min(max_backoff * 5, int(wait) / 1000)


class BotPlayer:
    """Plays one seat of one game through the public game API, like a player.

    **Over a session** (the default) it reads the current view with ``GetGame``
    and opens one ``Play`` stream after that version. Whenever the latest view
    says its seat is to act, it asks its policy and sends the action on the
    stream (the view's etag, a fresh request id per decision), one action at a
    time: the next decision waits for the answer to the last. The answers:

    * the version carrying its request id: applied (a message covering several
      versions, ``from_version < version``, is just the latest view);
    * ``repeated``: applied before (a resend after a cut); it acts again on no
      view older than the version the action produced;
    * ``refused`` NOT_YOUR_TURN, STALE_ETAG or CONFLICT: it lost a race. When
      the session has a newer version on its way it waits for it and decides
      again; otherwise it refreshes with ``GetGame`` (the store may be ahead of
      the session, or behind: below) and decides again;
    * ``refused`` RATE_LIMITED: it waits the ``retry_after_ms`` the refusal
      asks (bounded) and resends the same action, same request id;
    * any other refusal (GAME_OVER: refresh; BAD_ACTION, NOT_SEATED...): as
      the unary mode treats that status; a refusal it cannot explain raises
      :class:`BotError`.

    A broken stream (UNAVAILABLE, a killed replica, a reset...) is reopened
    with a bounded backoff after the last version received, and the action
    still unanswered is sent again with the same request id (the server applies
    it at most once: a retry of an applied one answers ``repeated``). A stream
    silent for ``idle_timeout`` seconds, or one that ends before the match,
    is followed by a ``GetGame`` and reopened.

    **Unary** (``session=False``) it follows the game with ``WatchGame``
    (resuming after the last version it saw when the stream drops), and sends
    each action with ``SubmitAction`` (a minimal response view unless
    ``response_view`` says otherwise). ABORTED (stale etag, conflict)
    refreshes with ``GetGame`` and decides again; UNAVAILABLE retries the same
    request id with a bounded backoff; FAILED_PRECONDITION NOT_YOUR_TURN means
    its view was stale: it waits for the next one.

    Either way :meth:`run` returns the last view once the match is over (or a
    fixed-deal game ran out of deals), and every wait is bounded.

    The server is the only truth. A stream message no newer than the view
    the bot holds is skipped (it saw that version already), but a ``GetGame``
    view is always adopted, even one *older* than the newest version seen: a
    store that lost its last writes (a Redis crash with ``appendfsync
    everysec``) puts the game back a few versions, and the etag of a lost
    version would be refused forever. When a refresh finds the game behind,
    the bot reopens its stream after the server's version (one after a version
    that no longer exists would stay silent until the game passed it again); a
    bot that was not refreshed notices at its next refresh, after
    ``idle_timeout`` seconds without news at the latest.
    """

    def __init__(
        self,
        stub: GameCalls,
        game: str,
        token: str,
        policy: Policy,
        *,
        session: bool = True,
        think: float = 0.0,
        rpc_timeout: float = 10.0,
        idle_timeout: float = 20.0,
        attempts: int = 8,
        backoff: float = 0.05,
        max_backoff: float = 1.0,
        response_view: game_service_pb2.ResponseView.ValueType = (
            game_service_pb2.RESPONSE_VIEW_MINIMAL
        ),
    ) -> None:
        self.name = game if game.startswith("games/") else f"games/{game}"
        self.policy = policy
        self.session = session
        """Plays over a Play session (else WatchGame + SubmitAction)."""
        self._stub = stub
        self._metadata: tuple[tuple[str, str], ...] = (("authorization", f"Bearer {token}"),)
        self._think = think
        self._rpc_timeout = rpc_timeout
        self._idle_timeout = idle_timeout
        self._attempts = attempts
        self._backoff = backoff
        self._max_backoff = max_backoff
        self._response_view = response_view
        self._view = game_pb2.GameView()
        self._version = -1
        self._rewound = False  # a refresh found the game behind the stream: reopen it
        # The session's action in flight (sent, not answered), and what else
        # holds the next decision back.
        self._pending: game_service_pb2.SessionAction | None = None
        self._resends = 0  # RATE_LIMITED resends of the pending action
        self._refusals = 0  # refusals in a row (no new version or applied action between)
        self._act_from = 0  # decide on no view older than this version
        self.actions = 0
        """Actions of this bot the service applied."""
        self.reconnects = 0
        """Streams (Play, or WatchGame) reopened after a drop, an end, an idle
        spell or a rewind."""

    @property
    def view(self) -> game_pb2.GameView:
        """The latest full view the bot has seen."""
        return self._view

    async def _reopening(self, dropped: bool, failures: int, rpc: str) -> int:
        """Before a stream is opened again: a back-off if the last one dropped
        (BotError past the attempts); the failures in a row so far."""
        if dropped:
            failures += 1
            if failures > self._attempts:
                raise BotError(f"{self.name}: {rpc} keeps failing")
            await asyncio.sleep(self._delay(failures))
        self.reconnects += 1
        return failures

    def _delay(self, attempt: int) -> float:
        return float(min(self._max_backoff, self._backoff * 2**attempt))

    async def run(self) -> game_pb2.GameView:
        """Play until the match is over (or no deal is left); the final view."""
        if self.session:
            return await self._run_session()
        return await self._run_unary()

    async def _refresh(self) -> None:
        """GetGame (retried while the store is unavailable): the current full view,
        adopted even when it is older than the newest version seen (the store
        lost writes: the server is the truth)."""
        request = game_service_pb2.GetGameRequest(name=self.name)
        for attempt in range(self._attempts + 1):
            try:
                reply = await self._stub.GetGame(
                    request, metadata=self._metadata, timeout=self._rpc_timeout
                )
            except grpc.aio.AioRpcError as error:
                if error.code() not in _RETRY_CODES or attempt == self._attempts:
                    raise
                await asyncio.sleep(self._delay(attempt))
                continue
            view = reply.game
            view.ClearField("events")
            version = game_version(view)
            if version < self._version:
                self._rewound = True
            self._view = view
            self._version = version
            self._act_from = 0  # the server's own view: decide on it
            return

    def _to_act(self) -> bool:
        view = self._view
        return not is_over(view) and view.HasField("to_act") and view.to_act == view.seat

    # ----------------------------------------------------------------------- a session

    async def _run_session(self) -> game_pb2.GameView:
        await self._refresh()
        failures = 0
        loop = asyncio.get_running_loop()
        while not is_over(self._view):
            self._rewound = False  # the stream starts after the server's version
            call = self._stub.Play(metadata=self._metadata)
            dropped = True  # the stream failed or ended before the match did
            resync = False  # ask the server where the game is before reopening
            try:
                opening = game_service_pb2.OpenSession(
                    name=self.name, after_version=max(self._version, 0)
                )
                await self._send(call, game_service_pb2.PlayRequest(open=opening))
                if self._pending is not None:
                    # Unanswered on the last stream: the same request id, applied at most once.
                    await self._send(call, game_service_pb2.PlayRequest(action=self._pending))
                else:
                    await self._decide(call)
                # One timeout for the whole stream, moved before each read (cheaper
                # than a wait_for, which wraps every read in a task of its own).
                async with asyncio.timeout(None) as idle:
                    while True:
                        idle.reschedule(loop.time() + self._idle_timeout)
                        message = await call.read()
                        idle.reschedule(None)
                        if not isinstance(message, game_service_pb2.PlayResponse):
                            resync = True  # ended (OK) before the match did, as we saw it
                            break
                        failures = 0
                        await self._receive(call, message)
                        if is_over(self._view) and self._pending is None:
                            with contextlib.suppress(grpc.aio.AioRpcError):
                                await call.done_writing()
                            return self._view
                        # Over with an action unanswered (resent on this stream): the
                        # server answers it before it ends the stream (repeated, or
                        # refused GAME_OVER); read on until then.
                        if self._rewound:
                            break  # this stream follows versions the game lost: reopen
                    dropped = not self._rewound
            except TimeoutError:
                dropped = False  # nothing for a while: resynchronise and reopen
                resync = True
            except grpc.aio.AioRpcError as error:
                if error.code() not in _STREAM_RETRY_CODES:
                    raise
            finally:
                call.cancel()
            failures = await self._reopening(dropped, failures, "Play")
            if resync:
                await self._refresh()
        return self._view

    @staticmethod
    async def _send(call: SessionCall, request: game_service_pb2.PlayRequest) -> None:
        """Write one request; on a stream that is over or breaking, nothing: the
        next read says how it ended (a write racing the end fails with a status
        of its own, grpc-aio's INTERNAL "Internal error from Core", not the
        stream's)."""
        with contextlib.suppress(asyncio.InvalidStateError, grpc.aio.AioRpcError):
            await call.write(request)

    async def _decide(self, call: SessionCall) -> None:
        """Send the policy's action when the latest view says this seat is to act
        and nothing holds the decision back (an action unanswered, a stale view)."""
        if self._pending is not None or self._version < self._act_from or not self._to_act():
            return
        view = self._view
        action = self.policy.choose(view)
        if self._think > 0:
            await asyncio.sleep(self._think)
        self._pending = game_service_pb2.SessionAction(
            action=action, etag=view.etag, request_id=uuid.uuid4().hex
        )
        self._resends = 0
        await self._send(call, game_service_pb2.PlayRequest(action=self._pending))

    async def _receive(self, call: SessionCall, message: game_service_pb2.PlayResponse) -> None:
        """One message of the session: the answer to the action in flight (if it
        is), the new view (if newer), then the next decision."""
        pending = self._pending
        if pending is not None and message.request_id == pending.request_id:
            if message.HasField("refused"):
                await self._refused(call, message)
                return
            self._pending = None  # applied now (its version), or before (repeated)
            self.actions += 1
            self._refusals = 0
            if message.repeated:
                self._act_from = max(self._act_from, message.version)
        if message.HasField("game") and message.version > self._version:
            self._view = message.game
            self._version = message.version
            self._refusals = 0
        await self._decide(call)

    async def _refused(self, call: SessionCall, message: game_service_pb2.PlayResponse) -> None:
        """The action in flight was refused (nothing changed)."""
        refused = message.refused
        code = _STATUS_BY_NUMBER.get(refused.code, grpc.StatusCode.UNKNOWN)
        if code == grpc.StatusCode.RESOURCE_EXHAUSTED and self._pending is not None:
            self._resends += 1
            if self._resends > self._attempts:
                raise BotError(f"{self.name}: seat {self._view.seat} stays rate limited")
            await asyncio.sleep(_refusal_wait(refused, self._max_backoff))
            await self._send(call, game_service_pb2.PlayRequest(action=self._pending))
            return
        self._pending = None
        self._refusals += 1
        if self._refusals > self._attempts:
            raise BotError(f"{self.name}: seat {self._view.seat} cannot get an action through")
        if code == grpc.StatusCode.FAILED_PRECONDITION and refused.reason == "NOT_YOUR_TURN":
            self._act_from = self._version + 1  # a stale view: wait for the next one
            return
        if code not in (grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION):
            raise BotError(
                f"{self.name}: seat {self._view.seat}'s action refused: "
                f"{code.name} {refused.reason or '-'}: {refused.message}"
            )
        # STALE_ETAG, CONFLICT, or a refusal to re-check (GAME_OVER...).
        if message.version > self._version:
            self._act_from = message.version  # the session brings it: decide on that
            return
        # The session knows nothing newer than our view: the store is elsewhere
        # (ahead of the replica, or behind us after it lost writes). Ask it.
        await self._refresh()
        if not self._rewound:
            await self._decide(call)

    # ----------------------------------------------------------------------- unary calls

    async def _run_unary(self) -> game_pb2.GameView:
        await self._refresh()
        failures = 0
        while True:
            if is_over(self._view):
                return self._view
            await self._act()
            if is_over(self._view):
                return self._view
            self._rewound = False  # the watch starts after the server's version
            call = self._stub.WatchGame(
                game_service_pb2.WatchGameRequest(name=self.name, after_version=self._version),
                metadata=self._metadata,
            )
            dropped = True  # the stream failed or ended before the match did
            loop = asyncio.get_running_loop()
            try:
                async with asyncio.timeout(None) as idle:
                    while True:
                        idle.reschedule(loop.time() + self._idle_timeout)
                        message = await call.read()
                        idle.reschedule(None)
                        if not isinstance(message, game_service_pb2.WatchGameResponse):
                            break
                        failures = 0
                        if message.version <= self._version:
                            continue  # already seen (through GetGame)
                        self._view = message.game
                        self._version = message.version
                        if is_over(self._view):
                            return self._view
                        await self._act()
                        if is_over(self._view):
                            return self._view
                        if self._rewound:
                            break  # this stream follows versions the game lost: reopen
                    dropped = not self._rewound
            except TimeoutError:
                dropped = False  # nothing for a while: resynchronise and watch again
            except grpc.aio.AioRpcError as error:
                if error.code() not in _STREAM_RETRY_CODES:
                    raise
            finally:
                call.cancel()
            failures = await self._reopening(dropped, failures, "WatchGame")
            await self._refresh()

    async def _act(self) -> None:
        """Act while the latest view says it is this seat's turn.

        Returns once an action was applied (the stream brings the next view),
        when the view proves stale (NOT_YOUR_TURN), or when it is not our turn.
        """
        refused = 0
        while True:
            view = self._view
            if not self._to_act():
                return
            action = self.policy.choose(view)
            if self._think > 0:
                await asyncio.sleep(self._think)
            outcome = await self._submit(action, view.etag)
            if outcome in ("applied", "wait"):
                return
            refused += 1  # "refresh": stale etag, conflict, or a refusal to re-check
            if refused > self._attempts:
                raise BotError(f"{self.name}: seat {view.seat} cannot get an action through")
            await self._refresh()

    async def _submit(self, action: game_pb2.Action, etag: str) -> str:
        """Send one decision; "applied", "wait" (stale view) or "refresh"."""
        request = game_service_pb2.SubmitActionRequest(
            name=self.name,
            action=action,
            etag=etag,
            request_id=uuid.uuid4().hex,
            response_view=self._response_view,
        )
        for attempt in range(self._attempts + 1):
            try:
                await self._stub.SubmitAction(
                    request, metadata=self._metadata, timeout=self._rpc_timeout
                )
            except grpc.aio.AioRpcError as error:
                code = error.code()
                last = attempt == self._attempts
                if code in _RETRY_CODES and not last:
                    await asyncio.sleep(self._delay(attempt))
                    continue  # the same request id: applied at most once
                if code == grpc.StatusCode.RESOURCE_EXHAUSTED and not last:
                    await asyncio.sleep(rate_limit_wait(error, self._max_backoff))
                    continue
                if code == grpc.StatusCode.ABORTED:
                    return "refresh"
                if code == grpc.StatusCode.FAILED_PRECONDITION:
                    reason = TrucError.reason_of(error)
                    if reason == "NOT_YOUR_TURN":
                        return "wait"
                    return "refresh"  # GAME_OVER, or a view that was stale after all
                raise
            self.actions += 1
            return "applied"
        raise AssertionError("unreachable")  # pragma: no cover
