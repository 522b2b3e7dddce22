"""``truc load`` (also ``truc-load``): the load generator.

It drives ``--players`` scripted players (default 60, rounded up to a multiple
of the table size, six in Truc y Flou, so that every table can fill) through the
real path of a deployment, at tables of ``--ruleset`` (``truc_y_flou`` unless
said; ``--seats 2`` for two-seat ``catalan_truc``):
``SignInGuest``, ``CreateTicket``, ``WatchTicket`` until seated, then the whole
match through the game service with a :class:`~truc_bots.BotPlayer`
and a :class:`~truc_bots.HeuristicPolicy`. ``--transport`` says how the
players reach the game service:

* ``session`` (the default): ``GetGame``, then one ``Play`` session per seat
  for the whole match (every version comes in on it, the seat's actions go
  out on it);
* ``unary`` (to compare): ``GetGame``, one ``WatchGame`` per seat and a
  ``SubmitAction`` per action, as clients played before sessions.

When its match ends each player
queues again, until ``--duration`` seconds have passed or ``--games`` matches
have been completed (whichever comes first; 30 s when neither is given).

**Stopping abandons the games in flight**: at the stop the players' tasks are
cancelled, queued tickets are cancelled (``CancelTicket``) and the channels
closed; the abandoned games are counted in the report (the game service plays
their late seats by its turn deadlines). Rates are per second of the measured
run, so a stop never skews them with a drain.

Every call goes through a measuring wrapper of the stubs. What a latency is:

* unary calls: the call, request sent to answer received (failed calls too);
* ``WatchTicket``: from opening the stream to its first message;
* ``WatchGame`` and ``Play``: per message bringing a version, the delivery
  lag: from the moment a player of this process sent the action that produced
  that version (``SubmitAction``, or an action on a session) to the moment
  this stream received it (versions made by others, such as the service's
  turn deadlines or lobby bots, are counted but not timed);
* ``SessionAction`` (the actions sent on ``Play`` sessions, counted like a
  unary method: ``calls`` sent, resends included, ``ok`` answered with the
  version they produced or ``repeated``, ``errors`` the refusals by code and
  reason): from writing the action to reading its answer.

Errors are counted per method by gRPC status code and ErrorInfo reason
(``ABORTED/STALE_ETAG``...), including those the players handle (a stale view
is decided again, UNAVAILABLE and RATE_LIMITED are retried, and so would be
an ALREADY_QUEUED, which the lobby no longer answers once a match has ended). An error a
player cannot handle is **fatal**: it ends that player's match (the player
signs in again after a second). The exit status is 1 if any fatal error
happened or no match was completed, 2 if the services cannot be reached (or
the arguments are wrong), else 0.

Once a second a progress line goes to stderr (``--quiet``: none); at the end a
summary table goes to stdout and, with ``--report PATH``, this JSON report
(:class:`~truc_client.load_report.LoadReport`, which also reads one back)::

    {
      "schema": "truc-load/1",
      "config": {"lobby": "127.0.0.1:50052", "game": "127.0.0.1:50051",
                 "players": 60, "duration_s": 30.0, "games": null, "seed": 1,
                 "response_view": "minimal", "target_score": 0, "manches": 0,
                 "rule_set": "truc_y_flou", "seats": 0, "think_s": 0.0, "channels": 1,
                 "transport": "session", "event_loop": "uvloop"},
      "stopped_by": "duration" | "games" | "interrupted",
      "elapsed_s": 30.01,
      "games": {"completed": 12, "abandoned": 10},
      "actions": {"submitted": 41234, "per_second": 1374.0},
      "tickets": {"created": 180, "seated": 180, "per_second": 6.0},
      "queue_to_seated_ms": {"count": 180, "p50": .., "p95": .., "p99": .., "max": .., "mean": ..},
      "rpcs": {"SessionAction": {"calls": 41300, "ok": 41234,
                                 "latency_ms": {"count": .., "p50": .., "p95": .., "p99": ..,
                                                "max": .., "mean": ..},
                                 "errors": {"ABORTED/STALE_ETAG": 66}},
               "Play": {"calls": 360, "ok": 300, "messages": 247000, "latency_ms": {..},
                        "errors": {}},
               ...},
      "errors": {"total": 66, "fatal": 0, "fatal_examples": []},
      "cpu": {"load_process_s": 25.1, "load_process_percent": 83.6},
      "ok": true
    }

``actions.submitted`` counts the actions the service applied (SubmitAction
answered OK, or a SessionAction answered with its version);
``tickets.per_second`` counts created tickets; ``config.transport`` says which
path the run took. For a stream, ``calls`` is the streams opened and ``ok``
those that ended without an error. Percentiles come from a
:class:`~truc_client.latency.LatencyHistogram` (within 1%).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, TextIO, TypeVar

import grpc
from grpc.aio import EOF  # type: ignore[attr-defined]
from truc.v1 import (
    game_pb2,
    game_service_pb2,
    game_service_pb2_grpc,
    lobby_pb2,
    lobby_service_pb2,
    lobby_service_pb2_grpc,
)

from truc_bots import BotPlayer, HeuristicPolicy, SessionCall, StreamCall
from truc_protocol.convert import options_from_proto
from truc_protocol.errors import InvalidArgument
from truc_rules.registry import seat_count

from .client import TrucError
from .latency import LatencyHistogram
from .load_report import SCHEMA, LoadReport
from .session import refusal_error

if TYPE_CHECKING:
    from truc.v1.game_service_pb2_grpc import GameServiceAsyncStub
    from truc.v1.lobby_service_pb2_grpc import LobbyServiceAsyncStub

__all__ = ["LoadConfig", "LoadRun", "main", "parse_args"]

_Reply = TypeVar("_Reply")
_Message = TypeVar("_Message")

_SEAT_TIMEOUT: Final = 120.0
"""A player not seated within this long counts a fatal error."""
_QUEUE_RETRY_SECONDS: Final = 60.0
"""How long CreateTicket is retried while the lobby is unavailable (or answers
ALREADY_QUEUED: it should not, a player being freed as their match ends)."""
_RETRIED_CODES: Final = frozenset(
    (
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    )
)
_OPEN_TICKET: Final = frozenset(
    (lobby_pb2.TICKET_STATE_QUEUED, lobby_pb2.TICKET_STATE_AWAITING_CONFIRMATION)
)
_VIEWS: Final = {
    "minimal": game_service_pb2.RESPONSE_VIEW_MINIMAL,
    "full": game_service_pb2.RESPONSE_VIEW_FULL,
}
_SENT_WINDOW: Final = 32
"""Send times kept per game for the WatchGame delivery lag (the latest versions)."""
TRANSPORTS: Final = ("session", "unary")
"""What ``--transport`` takes: Play sessions (the default), or WatchGame + SubmitAction."""
_ACTION_METHOD: Final = {"session": "SessionAction", "unary": "SubmitAction"}
"""The method whose answers count the applied actions, by transport."""


# --------------------------------------------------------------------------- measuring


class MethodStats:
    """One RPC method's counts, latencies and errors."""

    __slots__ = ("calls", "errors", "latency", "messages", "ok")

    def __init__(self) -> None:
        self.calls = 0
        self.ok = 0
        self.messages = 0
        self.latency = LatencyHistogram()
        self.errors: dict[str, int] = {}

    def failed(self, error: grpc.aio.AioRpcError) -> None:
        reason = TrucError.reason_of(error)
        key = f"{error.code().name}/{reason}" if reason else error.code().name
        self.errors[key] = self.errors.get(key, 0) + 1

    def as_json(self, *, stream: bool) -> dict[str, Any]:
        entry: dict[str, Any] = {"calls": self.calls, "ok": self.ok}
        if stream:
            entry["messages"] = self.messages
        entry["latency_ms"] = self.latency.summary()
        entry["errors"] = dict(sorted(self.errors.items()))
        return entry


class Recorder:
    """The stats of every method, by name."""

    def __init__(self) -> None:
        self.methods: dict[str, MethodStats] = {}
        self.streams: set[str] = set()

    def method(self, name: str, *, stream: bool = False) -> MethodStats:
        if stream:
            self.streams.add(name)
        return self.methods.setdefault(name, MethodStats())

    def error_count(self) -> int:
        return sum(sum(m.errors.values()) for m in self.methods.values())


class _TimedUnary(Generic[_Reply]):
    """A unary multicallable that records each call's latency and outcome."""

    __slots__ = ("_call", "_stats")

    def __init__(self, stats: MethodStats, call: Callable[..., Awaitable[_Reply]]) -> None:
        self._stats = stats
        self._call = call

    async def __call__(self, request: object, **kwargs: Any) -> _Reply:
        stats = self._stats
        stats.calls += 1
        start = time.perf_counter_ns()
        try:
            reply = await self._call(request, **kwargs)
        except grpc.aio.AioRpcError as error:
            stats.latency.record(time.perf_counter_ns() - start)
            stats.failed(error)
            raise
        stats.latency.record(time.perf_counter_ns() - start)
        stats.ok += 1
        return reply


class _TimedStreamCall(Generic[_Message]):
    """A server stream whose messages and failure are recorded."""

    __slots__ = ("_call", "_ended", "_first", "_on_message", "_start", "_stats")

    def __init__(
        self,
        stats: MethodStats,
        call: StreamCall,
        on_message: Callable[[_Message, int], None] | None,
    ) -> None:
        self._stats = stats
        self._call = call
        self._on_message = on_message
        self._start = time.perf_counter_ns()
        self._first = True
        self._ended = False

    async def read(self) -> object:
        stats = self._stats
        try:
            message = await self._call.read()
        except grpc.aio.AioRpcError as error:
            if not self._ended:
                self._ended = True
                stats.failed(error)
            raise
        if message is EOF:
            self._end()
            return message
        now = time.perf_counter_ns()
        stats.messages += 1
        if self._on_message is not None:
            self._on_message(message, now)  # type: ignore[arg-type]
        elif self._first:
            stats.latency.record(now - self._start)
        self._first = False
        return message

    def _end(self) -> None:
        if not self._ended:
            self._ended = True
            self._stats.ok += 1

    def cancel(self) -> bool:
        """Close the stream; it counts as ended without an error if it had not failed."""
        self._end()
        return self._call.cancel()


class _TimedStream(Generic[_Message]):
    __slots__ = ("_call", "_on_message", "_stats")

    def __init__(
        self,
        stats: MethodStats,
        call: Callable[..., StreamCall],
        on_message: Callable[[_Message, int], None] | None = None,
    ) -> None:
        self._stats = stats
        self._call = call
        self._on_message = on_message

    def __call__(self, request: object, **kwargs: Any) -> _TimedStreamCall[_Message]:
        self._stats.calls += 1
        return _TimedStreamCall(self._stats, self._call(request, **kwargs), self._on_message)


class _TimedPlayCall:
    """A Play session whose messages, actions and failure are recorded.

    ``stats`` is the stream's (``Play``: messages, the delivery lag of each
    version); ``actions`` the actions' (``SessionAction``: each write of an
    action until the message answering its request id).
    """

    __slots__ = ("_actions", "_asked", "_call", "_ended", "_name", "_sent", "_stats")

    def __init__(
        self, stats: MethodStats, actions: MethodStats, call: SessionCall, sent: _SendTimes
    ) -> None:
        self._stats = stats
        self._actions = actions
        self._call = call
        self._sent = sent
        self._name = ""
        self._asked: dict[str, int] = {}
        """request id -> when it was written (ns)."""
        self._ended = False

    async def write(self, request: game_service_pb2.PlayRequest) -> None:
        kind = request.WhichOneof("kind")
        if kind == "action":
            action = request.action
            self._actions.calls += 1
            self._asked[action.request_id] = time.perf_counter_ns()
            if action.etag.isdigit():
                self._sent.sending(self._name, int(action.etag) + 1)
        elif kind == "open":
            self._name = request.open.name
        await self._call.write(request)

    async def read(self) -> object:
        try:
            message = await self._call.read()
        except grpc.aio.AioRpcError as error:
            if not self._ended:
                self._ended = True
                self._stats.failed(error)
            raise
        if not isinstance(message, game_service_pb2.PlayResponse):
            self._end()
            return message
        now = time.perf_counter_ns()
        self._stats.messages += 1
        if message.request_id:
            asked = self._asked.pop(message.request_id, None)
            if asked is not None:
                self._answered(message, now - asked)
        if message.HasField("game"):
            at = self._sent.sent_at(self._name, message.version)
            if at is not None:
                self._stats.latency.record(now - at)
        return message

    def _answered(self, message: game_service_pb2.PlayResponse, elapsed: int) -> None:
        actions = self._actions
        actions.latency.record(elapsed)
        if not message.HasField("refused"):
            actions.ok += 1  # the version it produced, or repeated: applied once
            return
        error = refusal_error(message.refused)
        key = f"{error.code.name}/{error.reason}" if error.reason else error.code.name
        actions.errors[key] = actions.errors.get(key, 0) + 1

    async def done_writing(self) -> None:
        await self._call.done_writing()

    def _end(self) -> None:
        if not self._ended:
            self._ended = True
            self._stats.ok += 1

    def cancel(self) -> bool:
        """Close the stream; it counts as ended without an error if it had not failed."""
        self._end()
        return self._call.cancel()


class _Lobby:
    """The LobbyService calls of the load, measured."""

    def __init__(self, channel: grpc.aio.Channel, recorder: Recorder) -> None:
        stub: LobbyServiceAsyncStub = lobby_service_pb2_grpc.LobbyServiceStub(channel)
        self.SignInGuest = _TimedUnary[lobby_service_pb2.SignInGuestResponse](
            recorder.method("SignInGuest"), stub.SignInGuest
        )
        self.CreateTicket = _TimedUnary[lobby_service_pb2.CreateTicketResponse](
            recorder.method("CreateTicket"), stub.CreateTicket
        )
        self.CancelTicket = _TimedUnary[lobby_service_pb2.CancelTicketResponse](
            recorder.method("CancelTicket"), stub.CancelTicket
        )
        self.WatchTicket = _TimedStream[lobby_service_pb2.WatchTicketResponse](
            recorder.method("WatchTicket", stream=True), stub.WatchTicket
        )


class _Game:
    """The GameService calls of a :class:`BotPlayer`, measured (a ``GameCalls``).

    It notes when each action is sent (SubmitAction, or an action on a Play
    session: the version it should produce is its etag + 1) so that the
    WatchGame and Play streams can time each version's delivery.
    """

    def __init__(self, channel: grpc.aio.Channel, recorder: Recorder, sent: _SendTimes) -> None:
        stub: GameServiceAsyncStub = game_service_pb2_grpc.GameServiceStub(channel)
        self._sent = sent
        self.GetGame = _TimedUnary[game_service_pb2.GetGameResponse](
            recorder.method("GetGame"), stub.GetGame
        )
        self._submit = _TimedUnary[game_service_pb2.SubmitActionResponse](
            recorder.method("SubmitAction"), stub.SubmitAction
        )
        self._watch_stats = recorder.method("WatchGame", stream=True)
        self._watch = stub.WatchGame
        self._recorder = recorder
        self._play = stub.Play

    async def SubmitAction(  # noqa: N802 - the stub's method name
        self, request: game_service_pb2.SubmitActionRequest, **kwargs: Any
    ) -> game_service_pb2.SubmitActionResponse:
        if request.etag.isdigit():
            self._sent.sending(request.name, int(request.etag) + 1)
        return await self._submit(request, **kwargs)

    def WatchGame(  # noqa: N802 - the stub's method name
        self, request: game_service_pb2.WatchGameRequest, **kwargs: Any
    ) -> _TimedStreamCall[game_service_pb2.WatchGameResponse]:
        self._watch_stats.calls += 1
        name = request.name
        stats = self._watch_stats
        sent = self._sent

        def delivered(message: game_service_pb2.WatchGameResponse, now: int) -> None:
            at = sent.sent_at(name, message.version)
            if at is not None:
                stats.latency.record(now - at)

        return _TimedStreamCall(stats, self._watch(request, **kwargs), delivered)

    def Play(self, **kwargs: Any) -> _TimedPlayCall:  # noqa: N802 - the stub's method name
        stats = self._recorder.method("Play", stream=True)
        stats.calls += 1
        actions = self._recorder.method("SessionAction")
        return _TimedPlayCall(stats, actions, self._play(**kwargs), self._sent)


class _SendTimes:
    """Per game, when the SubmitAction that should produce each recent version was sent."""

    def __init__(self) -> None:
        self._games: dict[str, dict[int, int]] = {}
        self._players: dict[str, int] = {}

    def join(self, game: str) -> None:
        self._players[game] = self._players.get(game, 0) + 1
        self._games.setdefault(game, {})

    def leave(self, game: str) -> None:
        left = self._players.get(game, 1) - 1
        if left <= 0:
            self._players.pop(game, None)
            self._games.pop(game, None)
        else:
            self._players[game] = left

    def sending(self, game: str, version: int) -> None:
        versions = self._games.get(game)
        if versions is None:
            return
        versions[version] = time.perf_counter_ns()
        if len(versions) > _SENT_WINDOW:
            del versions[min(versions)]

    def sent_at(self, game: str, version: int) -> int | None:
        versions = self._games.get(game)
        return None if versions is None else versions.get(version)

    def games(self) -> set[str]:
        return set(self._players)


# --------------------------------------------------------------------------- the run


@dataclass(frozen=True, slots=True)
class LoadConfig:
    """What ``truc load`` was asked to do (its command-line flags)."""

    lobby: str = "127.0.0.1:50052"
    game: str = "127.0.0.1:50051"
    players: int = 60
    duration_s: float | None = None
    games: int | None = None
    seed: int = 1
    response_view: Literal["minimal", "full"] = "minimal"
    target_score: int = 0
    manches: int = 0
    rule_set: str = "truc_y_flou"
    seats: int = 0
    """catalan_truc only: 4 or 2 (0: the rule set's own)."""
    think_s: float = 0.0
    channels: int = 1
    transport: Literal["session", "unary"] = "session"
    """Play sessions, or WatchGame + SubmitAction (to compare)."""
    connect_timeout_s: float = 5.0
    quiet: bool = False
    report: str | None = None


class _Fatal(Exception):
    """A player cannot go on with this match or ticket."""


class LoadRun:
    """One load run: the players, the measurements, the stop."""

    def __init__(self, config: LoadConfig, *, err: TextIO = sys.stderr) -> None:
        self.config = config
        self.recorder = Recorder()
        self.seated = LatencyHistogram()
        self.games_done: set[str] = set()
        self.tickets_seated = 0
        self.fatal: list[str] = []
        self.fatal_count = 0
        self.stopped_by = "duration"
        self.event_loop = ""
        self.elapsed = 0.0
        self.cpu = 0.0
        self.abandoned = 0
        self._err = err
        self._sent = _SendTimes()
        self._stop = asyncio.Event()
        self._queued: dict[int, tuple[str, tuple[tuple[str, str], ...]]] = {}
        self._playing = 0
        self._lobbies: list[_Lobby] = []
        self._games: list[_Game] = []
        self._channels: list[grpc.aio.Channel] = []

    # ---------------------------------------------------------------- control

    def stop(self, why: str) -> None:
        if not self._stop.is_set():
            self.stopped_by = why
            self._stop.set()

    def _fail(self, what: str) -> None:
        self.fatal_count += 1
        if len(self.fatal) < 10:
            self.fatal.append(what)

    async def _connect(self) -> str | None:
        """Open the channels; an error message if a service cannot be reached."""
        options = [("grpc.use_local_subchannel_pool", 1)]  # one connection per channel
        for _ in range(max(1, self.config.channels)):
            lobby = grpc.aio.insecure_channel(self.config.lobby, options=options)
            game = grpc.aio.insecure_channel(self.config.game, options=options)
            self._channels += [lobby, game]
            self._lobbies.append(_Lobby(lobby, self.recorder))
            self._games.append(_Game(game, self.recorder, self._sent))
        for what, address, channel in (
            ("lobby", self.config.lobby, self._channels[0]),
            ("game service", self.config.game, self._channels[1]),
        ):
            try:
                await asyncio.wait_for(channel.channel_ready(), self.config.connect_timeout_s)
            except TimeoutError:
                return (
                    f"cannot reach the {what} at {address} "
                    f"(no connection within {self.config.connect_timeout_s:g} s)"
                )
        return None

    async def run(self) -> int:
        """Run to the stop; the exit status (see the module docstring)."""
        cpu0 = time.process_time()
        problem = await self._connect()
        if problem is not None:
            print(f"truc load: {problem}", file=self._err)
            await self._close()
            return 2
        start = time.perf_counter()
        players = [asyncio.create_task(self._player(i)) for i in range(self.config.players)]
        progress = asyncio.create_task(self._progress(start))
        duration = self.config.duration_s
        try:
            await asyncio.wait_for(self._stop.wait(), duration)
        except TimeoutError:
            self.stop("duration")
        self.elapsed = time.perf_counter() - start
        self.cpu = time.process_time() - cpu0
        self.abandoned = len(self._sent.games() - self.games_done)
        progress.cancel()
        for task in players:
            task.cancel()
        await asyncio.gather(progress, *players, return_exceptions=True)
        await self._cancel_queued()
        await self._close()
        if not self.config.quiet:
            self._err.write("\n" if self._err.isatty() else "")
        return 1 if self.fatal_count or not self.games_done else 0

    async def _cancel_queued(self) -> None:
        lobby = self._lobbies[0]

        async def cancel(name: str, meta: tuple[tuple[str, str], ...]) -> None:
            with contextlib.suppress(grpc.aio.AioRpcError):
                await lobby.CancelTicket(
                    lobby_service_pb2.CancelTicketRequest(name=name), metadata=meta, timeout=2
                )

        await asyncio.gather(*(cancel(n, m) for n, m in self._queued.values()))
        self._queued.clear()

    async def _close(self) -> None:
        for channel in self._channels:
            await channel.close(None)

    # ---------------------------------------------------------------- a player

    async def _player(self, index: int) -> None:
        lobby = self._lobbies[index % len(self._lobbies)]
        game = self._games[index % len(self._games)]
        matches = 0
        while not self._stop.is_set():
            try:
                signed = await lobby.SignInGuest(
                    lobby_service_pb2.SignInGuestRequest(display_name=f"load{index}"), timeout=10
                )
                meta = (("authorization", "Bearer " + signed.token),)
                while not self._stop.is_set():
                    ticket = await self._seat(index, lobby, meta)
                    seed = self.config.seed * 1_000_003 + index * 1_009 + matches
                    matches += 1
                    await self._play(game, ticket, seed)
            except asyncio.CancelledError:
                raise
            except (_Fatal, grpc.aio.AioRpcError) as error:
                self._fail(_describe(error))
            except Exception as error:  # a bug or a BotError: report it, keep loading
                self._fail(f"{type(error).__name__}: {error}")
            await asyncio.sleep(1.0)

    async def _seat(
        self, index: int, lobby: _Lobby, meta: tuple[tuple[str, str], ...]
    ) -> lobby_pb2.Ticket:
        """Queue (retrying while the lobby has not freed the player) and wait until seated."""
        request = lobby_service_pb2.CreateTicketRequest(options=_options(self.config))
        start = time.perf_counter_ns()
        deadline = time.monotonic() + _QUEUE_RETRY_SECONDS
        wait = 0.05
        while True:
            try:
                created = await lobby.CreateTicket(request, metadata=meta, timeout=10)
                break
            except grpc.aio.AioRpcError as error:
                retry = error.code() in _RETRIED_CODES or (
                    error.code() == grpc.StatusCode.ALREADY_EXISTS
                    and TrucError.reason_of(error) == "ALREADY_QUEUED"
                )
                if not retry or time.monotonic() > deadline:
                    raise
            await asyncio.sleep(wait)
            wait = min(1.0, wait * 2)
        name = created.ticket.name
        self._queued[index] = (name, meta)
        try:
            async with asyncio.timeout(_SEAT_TIMEOUT):
                ticket = await self._watch_ticket(lobby, name, meta)
        except TimeoutError:
            raise _Fatal(f"{name} not seated within {_SEAT_TIMEOUT:g} s") from None
        finally:
            self._queued.pop(index, None)
        self.seated.record(time.perf_counter_ns() - start)
        self.tickets_seated += 1
        return ticket

    async def _watch_ticket(
        self, lobby: _Lobby, name: str, meta: tuple[tuple[str, str], ...]
    ) -> lobby_pb2.Ticket:
        failures = 0
        while True:
            call = lobby.WatchTicket(lobby_service_pb2.WatchTicketRequest(name=name), metadata=meta)
            try:
                while True:
                    message = await call.read()
                    if not isinstance(message, lobby_service_pb2.WatchTicketResponse):
                        break  # the stream ended before the ticket was matched: watch again
                    ticket = message.ticket
                    if ticket.state == lobby_pb2.TICKET_STATE_MATCHED:
                        return ticket
                    if ticket.state not in _OPEN_TICKET:
                        state = lobby_pb2.TicketState.Name(ticket.state)
                        raise _Fatal(f"{name} closed while queued: {state}")
            except grpc.aio.AioRpcError as error:
                if error.code() not in _RETRIED_CODES:
                    raise
            finally:
                call.cancel()
            failures += 1
            if failures > 8:
                raise _Fatal(f"{name}: WatchTicket keeps failing")
            await asyncio.sleep(min(1.0, 0.05 * 2**failures))

    async def _play(self, game: _Game, ticket: lobby_pb2.Ticket, seed: int) -> None:
        bot = BotPlayer(
            game,
            ticket.game,
            ticket.game_token,
            HeuristicPolicy(seed),
            session=self.config.transport == "session",
            think=self.config.think_s,
            response_view=_VIEWS[self.config.response_view],
        )
        self._sent.join(bot.name)
        self._playing += 1
        try:
            final = await bot.run()
        finally:
            self._playing -= 1
            self._sent.leave(bot.name)
        if final.finished:
            self.games_done.add(bot.name)
            if self.config.games is not None and len(self.games_done) >= self.config.games:
                self.stop("games")

    # ---------------------------------------------------------------- reporting

    async def _progress(self, start: float) -> None:
        if self.config.quiet:
            return
        tty = self._err.isatty()
        method = _ACTION_METHOD[self.config.transport]
        submit = self.recorder.method(method)
        last = 0
        while True:
            await asyncio.sleep(1.0)
            now = submit.ok
            line = (
                f"{time.perf_counter() - start:6.1f}s  playing {self._playing:4d}  "
                f"queued {len(self._queued):4d}  games {len(self.games_done):5d}  "
                f"actions {now:8d} ({now - last:5d}/s)  "
                f"{method} p99 {submit.latency.percentile(99):7.1f} ms  "
                f"errors {self.recorder.error_count()} (fatal {self.fatal_count})"
            )
            last = now
            self._err.write(f"\r{line}" if tty else f"{line}\n")
            self._err.flush()

    def report(self) -> LoadReport:
        """The report (schema in the module docstring; :class:`LoadReport`)."""
        elapsed = self.elapsed or 1e-9
        methods = self.recorder.methods
        method = _ACTION_METHOD[self.config.transport]
        submitted = methods[method].ok if method in methods else 0
        created = methods["CreateTicket"].ok if "CreateTicket" in methods else 0
        config = asdict(self.config)
        config.pop("quiet")
        config.pop("connect_timeout_s")
        config.pop("report")
        config["event_loop"] = self.event_loop
        return LoadReport.parse(
            {
                "schema": SCHEMA,
                "config": config,
                "stopped_by": self.stopped_by,
                "elapsed_s": round(self.elapsed, 3),
                "games": {"completed": len(self.games_done), "abandoned": self.abandoned},
                "actions": {"submitted": submitted, "per_second": round(submitted / elapsed, 1)},
                "tickets": {
                    "created": created,
                    "seated": self.tickets_seated,
                    "per_second": round(created / elapsed, 2),
                },
                "queue_to_seated_ms": self.seated.summary(),
                "rpcs": {
                    name: stats.as_json(stream=name in self.recorder.streams)
                    for name, stats in sorted(methods.items())
                    if stats.calls
                },
                "errors": {
                    "total": self.recorder.error_count(),
                    "fatal": self.fatal_count,
                    "fatal_examples": list(self.fatal),
                },
                "cpu": {
                    "load_process_s": round(self.cpu, 2),
                    "load_process_percent": round(100 * self.cpu / elapsed, 1),
                },
                "ok": self.fatal_count == 0 and bool(self.games_done),
            }
        )


def _describe(error: BaseException) -> str:
    if isinstance(error, grpc.aio.AioRpcError):
        return str(TrucError.from_rpc(error))
    return str(error)


def summary_table(report: LoadReport | Mapping[str, Any]) -> str:
    """The report as the lines printed at the end of a run (a mapping is validated first)."""
    if not isinstance(report, LoadReport):
        report = LoadReport.parse(report)
    config = report.config
    games = report.games
    actions = report.actions
    tickets = report.tickets
    seated = report.queue_to_seated_ms
    cpu = report.cpu
    lines = [
        f"truc load: {config.players} players for {report.elapsed_s:.1f} s over "
        f"{'Play sessions' if config.transport == 'session' else 'unary calls'} "
        f"(stopped by {report.stopped_by}; in-flight games abandoned)",
        f"games completed {games.completed}, abandoned {games.abandoned}",
        f"actions {actions.submitted} ({actions.per_second:.1f}/s); "
        f"tickets {tickets.created} ({tickets.per_second:.2f}/s), seated {tickets.seated}",
        f"queue to seated ms: p50 {seated.p50:.1f}  p95 {seated.p95:.1f}  "
        f"p99 {seated.p99:.1f}  max {seated.max:.1f}",
        f"load process CPU {cpu.load_process_s:.1f} s "
        f"({cpu.load_process_percent:.0f}% of one core; event loop {config.event_loop})",
        "",
        f"{'method':<14}{'calls':>9}{'ok':>9}{'timed':>9}"
        f"{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}{'errors':>8}",
    ]
    errors: list[str] = []
    for name, entry in report.rpcs.items():
        latency = entry.latency_ms
        failed = sum(entry.errors.values())
        lines.append(
            f"{name:<14}{entry.calls:>9}{entry.ok:>9}{latency.count:>9}"
            f"{latency.p50:>9.2f}{latency.p95:>9.2f}{latency.p99:>9.2f}"
            f"{latency.max:>9.1f}{failed:>8}"
        )
        errors += [f"  {name} {key}: {n}" for key, n in entry.errors.items()]
    if errors:
        lines += ["", "errors by status (handled by the players unless counted as fatal):", *errors]
    fatal = report.errors
    lines += ["", f"fatal errors: {fatal.fatal}"]
    lines += [f"  {example}" for example in fatal.fatal_examples]
    return "\n".join(lines)


# --------------------------------------------------------------------------- command line


def _address(text: str) -> str:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, not {text!r}")
    return text


def _positive(kind: Callable[[str], float]) -> Callable[[str], Any]:
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not value > 0 or math.isinf(value):
            raise argparse.ArgumentTypeError(f"must be positive, not {text!r}")
        return value

    return parse


RULE_SETS: Final = tuple(
    name.removeprefix("RULE_SET_").lower()
    for name, number in game_pb2.RuleSet.items()
    if number != game_pb2.RULE_SET_UNSPECIFIED
)


def _options(config: LoadConfig) -> game_pb2.RuleOptions:
    """The tickets' options: Truc y Flou's leave ``rule_set`` unset, as before."""
    options = game_pb2.RuleOptions(
        target_score=config.target_score, manches_to_win=config.manches, seats=config.seats
    )
    if config.rule_set != "truc_y_flou":
        options.rule_set = game_pb2.RuleSet.Value("RULE_SET_" + config.rule_set.upper())
    return options


def parse_args(argv: Sequence[str] | None = None, *, err: TextIO = sys.stderr) -> LoadConfig:
    """The flags of ``truc load`` (``--help`` lists them)."""
    parser = argparse.ArgumentParser(
        prog="truc load",
        description="Drive scripted players through the lobby and whole games, and measure.",
    )
    parser.add_argument("--lobby", type=_address, default="127.0.0.1:50052", metavar="HOST:PORT")
    parser.add_argument("--game", type=_address, default="127.0.0.1:50051", metavar="HOST:PORT")
    parser.add_argument(
        "--players",
        type=_positive(int),
        default=60,
        help="rounded up to a multiple of the table size (6 in truc_y_flou)",
    )
    parser.add_argument(
        "--ruleset", choices=RULE_SETS, default="truc_y_flou", help="the game the tables play"
    )
    parser.add_argument("--seats", type=int, default=0, help="catalan_truc only: 4 or 2")
    parser.add_argument(
        "--duration", type=_positive(float), metavar="SECONDS", help="stop after this long"
    )
    parser.add_argument(
        "--games", type=_positive(int), metavar="N", help="stop once N matches are completed"
    )
    parser.add_argument("--report", metavar="PATH", help="write the JSON report there")
    parser.add_argument("--seed", type=int, default=1, help="seeds the players' policies")
    parser.add_argument("--response-view", choices=sorted(_VIEWS), default="minimal")
    parser.add_argument(
        "--transport",
        choices=TRANSPORTS,
        default="session",
        help="Play sessions (default), or unary: WatchGame + SubmitAction, to compare",
    )
    parser.add_argument(
        "--target-score",
        type=int,
        default=0,
        help="points that win a manche (0: the rule set's own, 25 in truc_y_flou)",
    )
    parser.add_argument("--manches", type=int, default=0, help="manches that win (0: 2)")
    parser.add_argument(
        "--think", type=float, default=0.0, metavar="SECONDS", help="pause before each action"
    )
    parser.add_argument(
        "--channels", type=_positive(int), default=1, help="connections to each service"
    )
    parser.add_argument(
        "--connect-timeout",
        type=_positive(float),
        default=5.0,
        metavar="SECONDS",
        help="give up when a service cannot be reached within this long",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    args = parser.parse_args(argv)
    probe = LoadConfig(rule_set=args.ruleset, seats=args.seats)
    try:
        table = seat_count(options_from_proto(_options(probe)))
    except InvalidArgument as error:
        parser.error(error.message)
    players = table * math.ceil(args.players / table)
    if players != args.players and not args.quiet:
        print(
            f"truc load: {args.players} players rounded up to {players} ({table} a table)",
            file=err,
        )
    duration = args.duration
    if duration is None and args.games is None:
        duration = 30.0
    return LoadConfig(
        lobby=args.lobby,
        game=args.game,
        players=players,
        duration_s=duration,
        games=args.games,
        seed=args.seed,
        response_view=args.response_view,
        target_score=args.target_score,
        manches=args.manches,
        rule_set=args.ruleset,
        seats=args.seats,
        think_s=args.think,
        channels=args.channels,
        transport=args.transport,
        connect_timeout_s=args.connect_timeout,
        quiet=args.quiet,
        report=args.report,
    )


async def _main(run: LoadRun) -> int:
    loop = asyncio.get_running_loop()
    run.event_loop = type(loop).__module__.split(".")[0]
    with contextlib.suppress(NotImplementedError):  # no signal handlers on some platforms
        loop.add_signal_handler(signal.SIGINT, run.stop, "interrupted")
        loop.add_signal_handler(signal.SIGTERM, run.stop, "interrupted")
    return await run.run()


def main(argv: Sequence[str] | None = None) -> int:
    """``truc load [flags]``; the exit status."""
    config = parse_args(argv)
    run = LoadRun(config)
    try:
        import uvloop  # noqa: PLC0415 - optional: a faster event loop when installed
    except ImportError:
        status = asyncio.run(_main(run))
    else:
        status = uvloop.run(_main(run))
    if status == 2:
        return status
    report = run.report()
    print(summary_table(report))
    if config.report:
        text = json.dumps(report.to_json(), indent=2)
        Path(config.report).write_text(text + "\n", encoding="utf-8")
    return status


if __name__ == "__main__":
    sys.exit(main())
