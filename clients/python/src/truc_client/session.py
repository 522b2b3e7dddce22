"""Play sessions: one long-lived stream per player for a whole match.

``GameService.Play`` is a bidirectional stream: the client opens it on a game
(``OpenSession``: the game, the version to resume after), then sends its
seat's actions on it (``SessionAction``: the action, the etag acted on, a
request id); the server sends one message for each new version of the game
(the caller's view at that version and the version's events for its seat,
with the request id when the version came from this player's action), the
refusal of an action (its status and ErrorInfo reason; the stream stays
open), or ``repeated`` for a request id applied before. It ends (OK) after the
version that finishes the match.

:class:`GameSession` is the client side of one such stream, over any object
with the stubs' ``Play`` and ``GetGame`` (:class:`SessionCalls`: the
generated ``GameServiceAsyncStub``, or the measuring wrapper of
:mod:`truc_client.load`). Open one with
:meth:`truc_client.client.TrucClient.session`::

    async with client.session(game, after_version=version) as session:
        async for update in session:          # one Update per version, in order
            if my_turn(update.view):
                await session.act(action, etag=update.view.etag)

* **Every version once, in order.** Each :class:`Update` brings the session
  from the version before ``from_version`` to ``version``: normally one
  version (``from_version == version``), several when the server coalesced
  them (a session that fell behind, a resume from an old version) or when
  this client did (its caller did not read for ``max_queued`` updates); its
  ``events`` are those of every version it covers.
* **Resumed by itself.** A stream that breaks (UNAVAILABLE, a replica killed or
  shut down, a cancelled call) is reopened, on any replica, after the last
  version received, and every action not yet answered is sent again *with the
  same request id* (the server applies it at most once; a retry of one
  applied answers ``repeated``). Failing for ``retry_for`` seconds without a
  new message raises a :class:`~truc_protocol.status.TrucError`.
* **The server is the truth.** Before reopening after a version, and after
  ``idle_timeout`` seconds without a message, the session asks ``GetGame``;
  when the game is *behind* the session (the store lost its last writes, e.g.
  a Redis crash with ``appendfsync everysec``) it yields the current view as
  an update with ``rewound`` set (no events) and follows on from there.
* **Acting.** :meth:`GameSession.act` sends one action (a fresh UUID request
  id) and waits for its answer: the update of the version it produced, or the
  :class:`~truc_protocol.status.TrucError` the unary ``SubmitAction`` would
  have raised, built from the refusal's code and reason: ``NOT_YOUR_TURN`` is
  FAILED_PRECONDITION, ABORTED (``STALE_ETAG``, ``CONFLICT``) is a
  :class:`StaleView` carrying the current view, and, as the unary
  :meth:`~truc_client.client.TrucClient.submit` does, UNAVAILABLE is retried
  with the same request id and ``RATE_LIMITED`` after its ``retry_after_ms``.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Final, Protocol, Self

import grpc
from truc.v1 import game_pb2, game_service_pb2

from truc_protocol.status import TrucError
from truc_protocol.views import game_version, is_over

__all__ = [
    "GameSession",
    "PlayCall",
    "RetryBudget",
    "SessionCalls",
    "StaleView",
    "TrucError",
    "Update",
    "refusal_error",
]

_RETRY_CODES: Final = frozenset((grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED))
_STREAM_RETRY_CODES: Final = _RETRY_CODES | {
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.CANCELLED,
}
_CODES: Final = {code.value[0]: code for code in grpc.StatusCode}
_FINAL_READ_SECONDS: Final = 2.0
"""After the message that ends the match: how long answers are still read
(refusals of actions sent meanwhile) before the stream is let go."""
_GAME_OVER: Final = "GAME_OVER"


class StaleView(TrucError):
    """An action was ABORTED (STALE_ETAG or CONFLICT); ``view`` is the current view.

    The action was not applied. Decide again from ``view`` (it may no longer be
    the caller's turn) and act with ``view.etag``.
    """

    def __init__(self, error: TrucError, view: game_pb2.GameView) -> None:
        super().__init__(error.code, error.reason, error.message)
        self.view = view


class RetryBudget:
    """The retry budget of one call: doubling waits until ``window`` seconds have passed."""

    def __init__(self, window: float, backoff: float, max_backoff: float) -> None:
        self._deadline = asyncio.get_running_loop().time() + window
        self._wait = backoff
        self._max_backoff = max_backoff

    async def wait(self, seconds: float | None = None) -> bool:
        """Sleep before the next try (``seconds``, else the next backoff); False
        when the budget is spent (then the caller gives up at once)."""
        delay = self._wait if seconds is None else seconds
        if seconds is None:
            self._wait = min(self._max_backoff, self._wait * 2)
        now = asyncio.get_running_loop().time()
        if now + delay > self._deadline:
            return False
        await asyncio.sleep(delay)
        return True


@dataclass(frozen=True, slots=True)
class Update:
    """The session brought to ``version``: one ``PlayResponse`` with a view.

    It covers the versions ``from_version`` to ``version`` (normally one);
    ``events`` are theirs, filtered for the caller's seat (each event names its
    version); ``view`` is the caller's view at ``version`` (its ``events``
    empty). ``request_id`` is set when the version came from this player's
    action with that id. ``rewound``: the game is *behind* the version the
    session had reached (the store lost its last writes); ``view`` is the
    game as it is now, and no events come with it.
    """

    version: int
    from_version: int
    view: game_pb2.GameView
    events: Sequence[game_pb2.Event] = ()
    request_id: str = ""
    rewound: bool = False

    @property
    def over(self) -> bool:
        """Nothing more will happen in the game (the last update of a session)."""
        return is_over(self.view)

    def then(self, later: Update) -> Update:
        """This update and ``later`` as one (``later`` alone if it rewound)."""
        if later.rewound:
            return later
        return Update(
            version=later.version,
            from_version=self.from_version,
            view=later.view,
            events=(*self.events, *later.events),
            request_id=later.request_id or self.request_id,
            rewound=self.rewound,
        )


class PlayCall(Protocol):
    """What a session does with a ``Play`` call (a ``grpc.aio`` stream-stream call)."""

    async def write(self, request: game_service_pb2.PlayRequest) -> None:
        """Send one request."""
        ...

    async def read(self) -> object:
        """The next ``PlayResponse``, or ``grpc.aio.EOF``."""
        ...

    def cancel(self) -> bool:
        """Stop the stream."""
        ...


class SessionCalls(Protocol):
    """The GameService calls a :class:`GameSession` makes (the generated
    ``GameServiceAsyncStub`` has them, and so does a measuring wrapper)."""

    @property
    def Play(self) -> Callable[..., PlayCall]: ...  # noqa: N802

    @property
    def GetGame(self) -> Callable[..., Awaitable[game_service_pb2.GetGameResponse]]: ...  # noqa: N802

    @property
    def SubmitAction(  # noqa: N802
        self,
    ) -> Callable[..., Awaitable[game_service_pb2.SubmitActionResponse]]:
        """Only to settle an action left unanswered when the match ended."""
        ...


def refusal_error(refused: game_service_pb2.ActionRefused) -> TrucError:
    """The :class:`TrucError` of a refused session action: the one the unary
    ``SubmitAction`` raises for the same code and reason."""
    code = _CODES.get(refused.code, grpc.StatusCode.UNKNOWN)
    return TrucError(code, refused.reason, refused.message)


class _Refusal(Exception):
    """An action's refusal, on its way from the reader to :meth:`GameSession.act`."""

    def __init__(self, message: game_service_pb2.PlayResponse) -> None:
        super().__init__(message.refused.reason)
        self.refused = message.refused
        self.version = message.version


@dataclass(slots=True, eq=False)
class _Pending:
    """An action sent and not answered yet."""

    request: game_service_pb2.PlayRequest
    answer: asyncio.Future[Update]
    sent_on: object = None
    """The call it was last written on."""
    sent_at: float = 0.0
    waits_for: int = field(default=0)
    """Answered ``repeated`` with this version: resolved when the session reaches it."""


class _Dropped(Exception):
    """The stream broke or ended early: reopen it (after a backoff)."""

    def __init__(self, error: TrucError | None) -> None:
        super().__init__(str(error))
        self.error = error


class GameSession:
    """One player's ``Play`` session on one game (``async with``; see the module)."""

    def __init__(
        self,
        calls: SessionCalls,
        name: str,
        metadata: tuple[tuple[str, str], ...],
        *,
        after_version: int = 0,
        response_view: game_service_pb2.ResponseView.ValueType = (
            game_service_pb2.RESPONSE_VIEW_FULL
        ),
        rpc_timeout: float = 10.0,
        retry_for: float = 20.0,
        backoff: float = 0.05,
        max_backoff: float = 1.0,
        idle_timeout: float = 20.0,
        max_queued: int = 64,
    ) -> None:
        self.name = name if name.startswith("games/") else f"games/{name}"
        self._calls = calls
        self._metadata = metadata
        self._response_view = response_view
        self._rpc_timeout = rpc_timeout
        self._retry_for = retry_for
        self._backoff = backoff
        self._max_backoff = max_backoff
        self._idle_timeout = idle_timeout
        self._max_queued = max(1, max_queued)
        self.version = after_version
        """The last version the session received (where it resumes)."""
        self.view: game_pb2.GameView | None = None
        """The latest view received (None until the first update)."""
        self.streams = 0
        """``Play`` streams opened (1 + the times the session resumed)."""
        self._latest: Update | None = None
        self._queue: deque[Update] = deque()
        self._wake = asyncio.Event()
        self._pending: dict[str, _Pending] = {}
        self._write_lock = asyncio.Lock()
        self._call: PlayCall | None = None
        self._task: asyncio.Task[None] | None = None
        self._done = False
        self._error: BaseException | None = None
        self._retries: RetryBudget | None = None
        self._last_message = 0.0

    # ------------------------------------------------------------------ lifetime

    async def __aenter__(self) -> Self:
        self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def start(self) -> None:
        """Open the stream (in a task of its own, which reads it until the end)."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"session {self.name}")

    async def close(self) -> None:
        """Close the stream; actions still waiting raise CANCELLED ``SESSION_CLOSED``."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if not self._done:
            self._end(TrucError(grpc.StatusCode.CANCELLED, "SESSION_CLOSED", "session closed"))
        call, self._call = self._call, None
        if call is not None:
            call.cancel()

    @property
    def done(self) -> bool:
        """The session ended (the match is over, it failed, or it was closed)."""
        return self._done

    @property
    def queued(self) -> int:
        """Updates received and not read yet: a caller about to act on an update
        may skip it when newer ones are waiting."""
        return len(self._queue)

    @property
    def current_call(self) -> PlayCall | None:
        """The ``Play`` call open now (None between two)."""
        return self._call

    # ------------------------------------------------------------------ reading

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Update:
        """The next update; ends after the one that finishes the match. Raises
        the :class:`TrucError` that ended the session otherwise."""
        if self._task is None:
            raise RuntimeError("a GameSession is used inside `async with`")
        while not self._queue:
            if self._done:
                if self._error is not None and not _closed(self._error):
                    raise self._error
                raise StopAsyncIteration
            self._wake.clear()
            await self._wake.wait()
        return self._queue.popleft()

    # ------------------------------------------------------------------ acting

    async def act(self, action: game_pb2.Action, *, etag: str = "", request_id: str = "") -> Update:
        """Apply one action for the caller's seat; the update of the version it produced.

        ``etag`` (the view's) makes the service refuse the action if the game
        moved on; empty acts on whatever is current. The action keeps its
        request id (a fresh UUID unless given) across reconnections and
        UNAVAILABLE refusals, so it is applied at most once; an answer
        ``repeated`` (it was applied before) is success. The update returned is
        the one the session yields (or yielded) for that version (coalesced
        with later ones, its ``version`` may be higher). A refusal raises what
        the unary ``SubmitAction`` would: :class:`StaleView` (with the current
        view) on ABORTED, else a :class:`TrucError` with the refusal's code and
        reason; after the match: FAILED_PRECONDITION ``GAME_OVER``.
        """
        if self._task is None:
            raise RuntimeError("a GameSession is used inside `async with`")
        retries = self._budget()
        request_id = request_id or uuid.uuid4().hex
        while True:
            try:
                return await self._send(action, etag, request_id)
            except _Refusal as refusal:
                error = refusal_error(refusal.refused)
                if error.code in _RETRY_CODES and await retries.wait():
                    continue  # the same request id: applied at most once
                if error.code == grpc.StatusCode.RESOURCE_EXHAUSTED and await retries.wait(
                    _rate_limit_wait(refusal.refused, self._max_backoff)
                ):
                    continue
                if error.code == grpc.StatusCode.ABORTED:
                    raise StaleView(error, await self._current_view(refusal.version)) from None
                raise error from None

    async def _send(self, action: game_pb2.Action, etag: str, request_id: str) -> Update:
        if self._done:
            raise self._ended_error()
        request = game_service_pb2.PlayRequest(
            action=game_service_pb2.SessionAction(action=action, etag=etag, request_id=request_id)
        )
        loop = asyncio.get_running_loop()
        pending = _Pending(request, loop.create_future())
        self._pending[request_id] = pending
        try:
            async with self._write_lock:
                call = self._call
                if call is not None and pending.sent_on is not call:
                    pending.sent_on = call
                    pending.sent_at = loop.time()
                    with contextlib.suppress(grpc.RpcError, asyncio.InvalidStateError):
                        await call.write(request)  # else: resent when the stream reopens
            return await pending.answer
        finally:
            if self._pending.get(request_id) is pending:
                del self._pending[request_id]

    def _ended_error(self) -> TrucError:
        if isinstance(self._error, TrucError):
            return self._error
        return TrucError(grpc.StatusCode.FAILED_PRECONDITION, _GAME_OVER, "the match is over")

    async def _current_view(self, version: int) -> game_pb2.GameView:
        """The view after a refusal at ``version``: the session's if it has that
        version (the server sends versions before their refusals), else GetGame."""
        if self.view is not None and self.version >= version:
            return self.view
        request = game_service_pb2.GetGameRequest(name=self.name)
        retries = self._budget()
        while True:
            try:
                reply = await self._calls.GetGame(
                    request, metadata=self._metadata, timeout=self._rpc_timeout
                )
            except grpc.aio.AioRpcError as error:
                if error.code() in _RETRY_CODES and await retries.wait():
                    continue
                raise TrucError.from_rpc(error) from None
            view = reply.game
            view.ClearField("events")
            return view

    # ------------------------------------------------------------------ the stream

    def _budget(self) -> RetryBudget:
        return RetryBudget(self._retry_for, self._backoff, self._max_backoff)

    async def _run(self) -> None:
        """Open, read, resume, until the match is over or the session fails."""
        self._retries = self._budget()
        try:
            while True:
                current = await self._behind(self.version)
                if current is not None:
                    self._rewind(current)
                    if is_over(current):
                        await self._finish()
                        return
                try:
                    await self._stream()
                except _Dropped as dropped:
                    if dropped.error is None and await self._finished_already():
                        await self._finish()
                        return
                    if not await self._retries.wait():
                        raise dropped.error or TrucError(
                            grpc.StatusCode.UNAVAILABLE,
                            "SESSION_FAILED",
                            f"{self.name}: Play keeps ending",
                        ) from None
                    continue
                await self._finish()
                return
        except asyncio.CancelledError:
            raise
        except TrucError as error:
            self._end(error)
        except Exception as error:  # a bug: end the session with it, never hang
            self._end(error)

    async def _stream(self) -> None:
        """One ``Play`` stream: returns after the match's last version, raises
        :class:`_Dropped` to be reopened (or a :class:`TrucError` to fail)."""
        call = self._calls.Play(metadata=self._metadata)
        self.streams += 1
        loop = asyncio.get_running_loop()
        self._last_message = loop.time()
        watchdog = asyncio.create_task(self._watchdog(call))
        try:
            async with self._write_lock:
                self._call = call
                # A write can fail when the server has ended the stream already
                # (after the match's last version): what it sent is still read.
                with contextlib.suppress(grpc.RpcError, asyncio.InvalidStateError):
                    await call.write(
                        game_service_pb2.PlayRequest(
                            open=game_service_pb2.OpenSession(
                                name=self.name,
                                after_version=self.version,
                                response_view=self._response_view,
                            )
                        )
                    )
                    for pending in list(self._pending.values()):
                        if pending.waits_for:
                            continue  # answered (repeated): only the version is awaited
                        pending.sent_on = call
                        pending.sent_at = loop.time()
                        await call.write(pending.request)
            over = False
            while True:
                if over:
                    async with asyncio.timeout(_FINAL_READ_SECONDS):
                        message = await call.read()
                else:
                    message = await call.read()
                if not isinstance(message, game_service_pb2.PlayResponse):
                    if over:
                        return
                    raise _Dropped(None)  # the stream ended before the match did
                self._last_message = loop.time()
                assert self._retries is not None
                self._retries = self._budget()
                over = self._receive(message) or over
        except TimeoutError:
            return  # the match is over: answers to late actions no longer matter
        except grpc.aio.AioRpcError as rpc_error:
            error = TrucError.from_rpc(rpc_error)
            if error.code not in _STREAM_RETRY_CODES:
                raise error from None
            raise _Dropped(error) from None
        except asyncio.InvalidStateError:
            raise _Dropped(None) from None  # written after the call ended
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # the session is closing
            raise _Dropped(None) from None  # the call was cancelled under us: resume
        finally:
            watchdog.cancel()
            self._call = None
            call.cancel()

    def _receive(self, message: game_service_pb2.PlayResponse) -> bool:
        """Take in one message; True if it brought the match's last version."""
        request_id = message.request_id
        if message.HasField("refused"):
            pending = self._pending.pop(request_id, None)
            if pending is not None and not pending.answer.done():
                pending.answer.set_exception(_Refusal(message))
            return False
        if message.repeated:
            pending = self._pending.get(request_id)
            if pending is not None:
                pending.waits_for = max(1, message.version)
                self._settle()
            return False
        if not message.HasField("game"):
            return False  # nothing this client knows how to read
        if message.version <= self.version:  # old news (a duplicate): nothing to yield
            pending = self._pending.pop(request_id, None) if request_id else None
            if pending is not None and self._latest is not None and not pending.answer.done():
                pending.answer.set_result(self._latest)
            return False
        update = Update(
            version=message.version,
            from_version=message.from_version or message.version,
            view=message.game,
            events=message.events,
            request_id=request_id,
        )
        self._adopt(update)
        return update.over

    def _adopt(self, update: Update) -> None:
        self.version = update.version
        self.view = update.view
        self._latest = update
        if update.rewound:
            self._queue.clear()  # versions the game no longer has
        if len(self._queue) >= self._max_queued:
            self._queue.append(self._queue.pop().then(update))
        else:
            self._queue.append(update)
        self._wake.set()
        if update.request_id:
            pending = self._pending.pop(update.request_id, None)
            if pending is not None and not pending.answer.done():
                pending.answer.set_result(update)
        self._settle()

    def _settle(self) -> None:
        """Resolve the actions answered ``repeated`` whose version has come."""
        latest = self._latest
        if latest is None:
            return
        for request_id, pending in list(self._pending.items()):
            if pending.waits_for and pending.waits_for <= self.version:
                del self._pending[request_id]
                if not pending.answer.done():
                    pending.answer.set_result(latest)

    def _rewind(self, current: game_pb2.GameView) -> None:
        version = game_version(current)
        self._adopt(Update(version=version, from_version=version, view=current, rewound=True))

    async def _finish(self) -> None:
        """The match is over: settle the actions still unanswered, then end.

        An action resent on a stream that then brought the match's last version
        may get no answer: the stream ends after that version. Whether it was
        applied (it may be what ended the match) is asked once with the unary
        SubmitAction under the same request id, which answers the version it
        produced if it was applied; otherwise it was not, and never will be
        (FAILED_PRECONDITION ``GAME_OVER``)."""
        for request_id, pending in list(self._pending.items()):
            if pending.waits_for or pending.answer.done():
                continue  # answered (repeated): settled by the version, or failed below
            action = pending.request.action
            try:
                await self._calls.SubmitAction(
                    game_service_pb2.SubmitActionRequest(
                        name=self.name,
                        action=action.action,
                        etag=action.etag,
                        request_id=request_id,
                        response_view=game_service_pb2.RESPONSE_VIEW_MINIMAL,
                    ),
                    metadata=self._metadata,
                    timeout=self._rpc_timeout,
                )
            except grpc.aio.AioRpcError as error:
                if error.code() in (grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION):
                    continue  # not applied: GAME_OVER below
                if not pending.answer.done():
                    pending.answer.set_exception(TrucError.from_rpc(error))
                continue
            if self._latest is not None and not pending.answer.done():
                pending.answer.set_result(self._latest)  # it was applied: success
        self._end(None)

    def _end(self, error: BaseException | None) -> None:
        """The session is over: wake the reader; actions still waiting fail."""
        self._done = True
        self._error = error
        self._wake.set()
        failure = self._ended_error() if error is None else error
        for pending in self._pending.values():
            if not pending.answer.done():
                pending.answer.set_exception(failure)
        self._pending.clear()

    async def _get(self) -> game_pb2.GameView | None:
        """One GetGame; None if it fails for a transient reason."""
        try:
            reply = await self._calls.GetGame(
                game_service_pb2.GetGameRequest(name=self.name),
                metadata=self._metadata,
                timeout=self._rpc_timeout,
            )
        except grpc.aio.AioRpcError as rpc_error:
            if rpc_error.code() in _STREAM_RETRY_CODES:
                return None
            raise TrucError.from_rpc(rpc_error) from None
        view = reply.game
        view.ClearField("events")
        return view

    async def _behind(self, version: int) -> game_pb2.GameView | None:
        """The current view if the game is behind ``version``, else None."""
        if version <= 0:
            return None  # nothing can be behind the start
        view = await self._get()
        if view is None or game_version(view) >= version:
            return None
        return view

    async def _finished_already(self) -> bool:
        """After a stream that ended with nothing more to say: is the game over
        at a version the session has (opened after the end: nothing comes)?"""
        view = await self._get()
        return view is not None and is_over(view) and game_version(view) <= self.version

    async def _watchdog(self, call: PlayCall) -> None:
        """While ``call`` is open, every half ``idle_timeout``: cancel the call
        (the session then resumes, resending what is unanswered) when an action
        has waited ``idle_timeout`` seconds for its answer, or when, after that
        long without a message, GetGame finds the game elsewhere (behind: the
        store lost writes; ahead at two looks: the stream is stuck)."""
        loop = asyncio.get_running_loop()
        ahead = False
        while True:
            await asyncio.sleep(self._idle_timeout / 2)
            now = loop.time()
            if any(
                p.sent_at and not p.waits_for and now - p.sent_at >= self._idle_timeout
                for p in self._pending.values()
            ):
                break
            if now - self._last_message < self._idle_timeout:
                continue
            view = await self._get()
            self._last_message = loop.time()  # look again a period later
            if view is None:
                continue
            there = game_version(view)
            if there == self.version or (there > self.version and not ahead):
                ahead = there > self.version
                continue
            break
        call.cancel()


def _closed(error: BaseException) -> bool:
    return isinstance(error, TrucError) and error.reason == "SESSION_CLOSED"


def _rate_limit_wait(refused: game_service_pb2.ActionRefused, max_backoff: float) -> float:
    """Seconds to wait after RATE_LIMITED: what the refusal asks (at most
    ``5 * max_backoff``), else ``max_backoff`` (as for the unary call)."""
    wait = refused.metadata.get("retry_after_ms", "")
    return min(max_backoff * 5, int(wait) / 1000) if wait.isdigit() else max_backoff
