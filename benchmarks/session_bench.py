"""Session benchmark (``make bench``): Play sessions through the real service and
Redis, beside today's unary path and the floors of the stack, in one run.

A bundled Redis, one game-service process (test flag on, no rate limit), a real
lobby (``api`` role, bots off: its consumer group reads the ended-games streams)
and the floor process (``floor_server.py``). Every process runs on uvloop, as the
services do (``truc_service.process.run_service``); so does this client.
Scripted games as in ``service_bench.py``: fixed deals, every action computed
before the clock starts; each seat knows after which versions it acts. Clients
read every message as raw bytes (the version is field 1; a session's
``from_version`` field 2), so the benchmark's own CPU stays small.

1. **Watched play**: ``--games`` games at once, each seat of each game on its own
   Play session (full views; SessionAction with etag and request id), the lobby
   following game ends. A seat acts when its session brings the version it acts
   after. Beside it, measured the same way: today's path (six seat WatchGame
   streams plus the lobby's WatchGame per game, the seat acting with a unary
   SubmitAction, minimal response, when its watch stream brings the version),
   and the floor of a session (``/bench.Floor/Play``: one EVALSHA with PUBLISH
   per action, the version pushed to the game's six streams). Latency: from a
   seat sending its action to the last of the six seats receiving the version.
2. **Unwatched actions**: the same on sessions opened with
   RESPONSE_VIEW_MINIMAL and nobody else watching (no spectator, no lobby
   watcher: only the game's six seat sessions), beside the unary floor
   (``/bench.Floor/Call``: GET + EVALSHA) and today's unary SubmitAction
   (minimal, nobody watching) driven by ``--games`` clients.
3. **Idle sessions**: a fresh game-service process; ``--idle`` sessions (six
   seats and four spectators per game, over several HTTP/2 connections) opened
   and held; its RSS and Redis's client connections before and after, and one
   move in a game, timed until every one of that game's sessions has it.

The timed runs are interleaved over ``--rounds`` rounds; medians are printed,
with the CPU per move of Redis, the lobby (and its CPU when nothing is played:
its matcher and sweeps) and this client. Each scripted game has ``--deals``
fixed deals (two, as in ``service_bench.py``: about 26 moves), so its sessions'
opening weighs on every move more than in a real match of several hundred
versions; part 3 measures what one open costs. ``--parts`` runs some parts
only. ``BENCH_PROFILE=FILE`` runs the game server under cProfile and writes its
profile to FILE.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import random
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, cast

import grpc
import uvloop
from grpc.aio import EOF  # type: ignore[attr-defined]
from redis import Redis
from truc.v1 import game_service_pb2

import service_bench
from service_bench import (
    HERE,
    Metadata,
    Script,
    bench_env,
    bench_tokens,
    cpu_seconds,
    create_games,
    percentile,
    run_floor,
    run_service,
    script_batches,
    start_game_service,
    start_process,
)
from truc_dev_redis import RedisServer
from truc_game.config import DEV_SECRET
from truc_redis.game_ends import GROUP, SHARDS, ended_stream
from truc_service.tokens import issue_token

_PLAY: Final = "/truc.v1.GameService/Play"
_WATCH: Final = "/truc.v1.GameService/WatchGame"
_SUBMIT: Final = "/truc.v1.GameService/SubmitAction"
_FLOOR_PLAY: Final = "/bench.Floor/Play"
_CHANNELS: Final = 4
"""HTTP/2 connections the timed runs spread their games over."""
_IDLE_STREAMS_PER_CHANNEL: Final = 100
_IDLE_SPECTATORS: Final = 4
"""Spectator sessions per game in the idle run, beside its six seats."""
_DRAIN_S: Final = 30.0
MS: Final = 1000.0

# ---------------------------------------------------------------- wire helpers


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = 0
    shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7


def head(message: bytes) -> tuple[int, int, bool]:
    """``(version, from_version, answer)`` of a serialized PlayResponse (or
    WatchGameResponse, or floor message): field 1, field 2 (the version when
    absent), and whether it is a refusal (field 6) or a repeat (field 7) rather
    than a new version. Top-level fields only: nested messages are skipped."""
    version = first = 0
    answer = False
    i = 0
    end = len(message)
    while i < end:
        tag, i = _varint(message, i)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, i = _varint(message, i)
            if number == 1:
                version = value
            elif number == 2:
                first = value
            elif number == 7 and value:
                answer = True
        elif wire == 2:
            length, i = _varint(message, i)
            i += length
            if number == 6:
                answer = True
        else:
            raise ValueError(f"unexpected wire type {wire} in field {number}")
    return version, first or version, answer


# ---------------------------------------------------------------- the games


@dataclass(frozen=True, slots=True)
class Table:
    """One scripted game, as the seats' clients play it."""

    name: str
    final: int
    """The version that ends the script (its last action's)."""
    acts: tuple[dict[int, bytes], ...]
    """Per seat: the version it acts after -> the request it sends then."""


def tables(scripts: Sequence[Script], kind: str) -> list[Table]:
    """``kind``: ``session`` (PlayRequest actions), ``today`` (SubmitActionRequest,
    minimal response) or ``floor`` (bytes of a session action's size)."""
    made = []
    for script in scripts:
        seats = len(script.create.players)
        acts: tuple[dict[int, bytes], ...] = tuple({} for _ in range(seats))
        for index, (seat, _full, lean) in enumerate(script.steps):
            version = index + 1
            if kind == "today":
                acts[seat][version] = lean
                continue
            sent = game_service_pb2.SubmitActionRequest.FromString(lean)
            request = game_service_pb2.PlayRequest(
                action=game_service_pb2.SessionAction(
                    action=sent.action, etag=sent.etag, request_id=sent.request_id
                )
            ).SerializeToString()
            acts[seat][version] = request if kind == "session" else b"a" * len(request)
        made.append(Table("games/" + script.create.game_id, len(script.steps) + 1, acts))
    return made


@dataclass(slots=True)
class Result:
    moves: int
    elapsed: float
    cpu: float
    """The game service's (or the floor's) CPU seconds."""
    others: dict[str, float]
    """CPU seconds of the other processes (lobby, Redis, this client)."""
    messages: int
    received_bytes: int
    latencies: list[float]
    answers: int = 0
    """Refusals and repeats received (none expected)."""
    moves_per_game: float = 0.0
    """The mean length of the scripts played (for the runs that open sessions per game)."""

    @property
    def per_second(self) -> float:
        return self.moves / self.elapsed

    @property
    def cpu_ms(self) -> float:
        return self.cpu / max(1, self.moves) * MS

    def other_ms(self, name: str) -> float:
        return self.others[name] / max(1, self.moves) * MS


class _Game:
    """What the seats of one game received."""

    __slots__ = ("counts", "lobby_last", "made", "opened", "seats", "sent_at", "table")

    def __init__(self, table: Table) -> None:
        self.table = table
        self.seats = len(table.acts)
        self.counts: dict[int, int] = {}
        self.sent_at: dict[int, float] = {}
        self.opened = asyncio.Event()
        self.made = 1
        self.lobby_last = 0


class Drive:
    """One timed run: ``concurrency`` games at once, one stream per seat."""

    def __init__(self, kind: str, tables: list[Table], *, concurrency: int) -> None:
        self.kind = kind
        self.queue = list(reversed(tables))
        self.concurrency = concurrency
        self.stopping = False
        self.sent = 0
        self.delivered = 0
        self.messages = 0
        self.received_bytes = 0
        self.answers = 0
        self.latencies: list[float] = []
        self.games: list[_Game] = []
        self.calls: set[grpc.aio.Call] = set()
        self.workers: list[asyncio.Task[None]] = []
        self.errors: list[Exception] = []

    def received(self, game: _Game, message: bytes) -> tuple[int, bool]:
        """Count a seat's message; its version, and whether it was an answer."""
        now = time.perf_counter()
        version, first, answer = head(message)
        if version > 1:  # the messages of moves (not the first of each session)
            self.messages += 1
            self.received_bytes += len(message)
        if answer:
            self.answers += 1
            return version, True
        counts = game.counts
        for v in range(first, version + 1):
            seen = counts.get(v, 0) + 1
            counts[v] = seen
            if seen == game.seats:
                if v == 1:
                    game.opened.set()
                else:
                    self.delivered += 1
                    sent = game.sent_at.get(v)
                    if sent is not None:
                        self.latencies.append(now - sent)
        return version, False

    async def acting(self, game: _Game, seat: int, version: int) -> bytes | None:
        """The request seat ``seat`` sends after ``version``, if any (and the clock allows)."""
        request = game.table.acts[seat].get(version)
        if request is None or self.stopping:
            return None
        if version == 1:
            await game.opened.wait()  # every seat follows the game before it starts
            if self.stopping:
                return None
        game.sent_at[version + 1] = time.perf_counter()
        game.made = version + 1
        self.sent += 1
        return request

    def settled(self) -> bool:
        if self.delivered < self.sent:
            return False
        return self.kind != "today-lobby" or all(g.lobby_last >= g.made for g in self.games)

    async def run(self, play: Callable[[_Game], Awaitable[None]], seconds: float) -> float:
        """Play for ``seconds``, then until every version made reached every seat;
        the elapsed time."""

        async def worker() -> None:
            while self.queue and not self.stopping:
                game = _Game(self.queue.pop())
                self.games.append(game)
                try:
                    await play(game)
                except Exception as exc:  # a game broke: counted and shown, the next one starts
                    self.errors.append(exc)

        start = time.perf_counter()
        self.workers = [asyncio.create_task(worker()) for _ in range(self.concurrency)]
        await asyncio.wait(self.workers, timeout=seconds)
        self.stopping = True
        if self.errors:
            print(
                f"  (warning: {len(self.errors)} games failed; the first: {self.errors[0]!r})",
                file=sys.stderr,
            )
        if time.perf_counter() < start + seconds - 0.1 and self.concurrency > 4:
            print("  (warning: the scripted games ran out before the time was up)", file=sys.stderr)
        drain_until = time.perf_counter() + _DRAIN_S
        while not self.settled() and time.perf_counter() < drain_until:
            await asyncio.sleep(0.002)
        elapsed = time.perf_counter() - start
        if not self.settled():
            print(
                f"  (warning: {self.sent - self.delivered} versions undelivered)", file=sys.stderr
            )
        return elapsed

    async def close(self) -> None:
        """Cancel the streams of the games the clock stopped mid-way, and their players."""
        for call in list(self.calls):
            call.cancel()
        for task in self.workers:
            task.cancel()
        await asyncio.gather(*self.workers, return_exceptions=True)


async def _stream_seat(
    drive: Drive,
    game: _Game,
    seat: int,
    call: grpc.aio.StreamStreamCall[bytes, bytes],
    opening: bytes,
    *,
    half_close: bool,
) -> None:
    drive.calls.add(call)
    try:
        await call.write(opening)
        final = game.table.final
        while True:
            message = await call.read()
            if message is EOF:
                return
            version, answer = drive.received(game, cast(bytes, message))
            if answer:
                continue
            if version >= final:
                if half_close:
                    await call.done_writing()
                continue
            request = await drive.acting(game, seat, version)
            if request is not None:
                await call.write(request)
    finally:
        drive.calls.discard(call)


def _open_request(name: str, minimal: bool) -> bytes:
    view = (
        game_service_pb2.RESPONSE_VIEW_MINIMAL
        if minimal
        else game_service_pb2.RESPONSE_VIEW_UNSPECIFIED
    )
    return game_service_pb2.PlayRequest(
        open=game_service_pb2.OpenSession(name=name, after_version=0, response_view=view)
    ).SerializeToString()


def _channels(address: str, count: int) -> list[grpc.aio.Channel]:
    """``count`` channels, each its own HTTP/2 connection."""
    return [
        grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
        for _ in range(count)
    ]


async def run_sessions(
    address: str,
    game_tables: list[Table],
    *,
    tokens: dict[int, Metadata],
    minimal: bool,
    seconds: float,
    concurrency: int,
    pids: dict[str, int],
) -> Result:
    """Every seat of every game on its own Play session."""
    channels = _channels(address, _CHANNELS)
    plays = [
        c.stream_stream(_PLAY, request_serializer=None, response_deserializer=None)
        for c in channels
    ]
    drive = Drive("session", game_tables, concurrency=concurrency)
    turn = 0

    async def play(game: _Game) -> None:
        nonlocal turn
        turn += 1
        open_bytes = _open_request(game.table.name, minimal)
        method = plays[turn % len(plays)]
        await asyncio.gather(
            *(
                _stream_seat(
                    drive,
                    game,
                    seat,
                    method(None, metadata=tokens[seat]),
                    open_bytes,
                    half_close=False,
                )
                for seat in range(game.seats)
            )
        )

    return await _timed(drive, play, seconds, pids, channels)


async def run_floor_sessions(
    address: str,
    game_tables: list[Table],
    *,
    seconds: float,
    concurrency: int,
    pids: dict[str, int],
    tag: str,
) -> Result:
    """The floor of a session: the same seats on ``/bench.Floor/Play`` streams."""
    channels = _channels(address, _CHANNELS)
    plays = [
        c.stream_stream(_FLOOR_PLAY, request_serializer=None, response_deserializer=None)
        for c in channels
    ]
    drive = Drive("floor", game_tables, concurrency=concurrency)
    metadata = (("authorization", "Bearer " + "x" * 180),)
    turn = 0

    async def play(game: _Game) -> None:
        nonlocal turn
        turn += 1
        group = f"{tag}:{game.table.name}".encode()
        method = plays[turn % len(plays)]
        await asyncio.gather(
            *(
                _stream_seat(
                    drive, game, seat, method(None, metadata=metadata), group, half_close=True
                )
                for seat in range(game.seats)
            )
        )

    return await _timed(drive, play, seconds, pids, channels)


async def run_today(
    address: str,
    game_tables: list[Table],
    *,
    tokens: dict[int, Metadata],
    lobby: Metadata,
    seconds: float,
    concurrency: int,
    pids: dict[str, int],
) -> Result:
    """Today's path, measured the same way: six seat WatchGame streams and the
    lobby's per game; the acting seat sends a unary SubmitAction (minimal)."""
    channels = _channels(address, _CHANNELS)
    watches = [
        c.unary_stream(_WATCH, request_serializer=None, response_deserializer=None)
        for c in channels
    ]
    submits = [
        c.unary_unary(_SUBMIT, request_serializer=None, response_deserializer=None)
        for c in channels
    ]
    drive = Drive("today-lobby", game_tables, concurrency=concurrency)
    turn = 0

    async def seat_watch(game: _Game, seat: int, index: int, request: bytes) -> None:
        call = watches[index](request, metadata=tokens[seat])
        drive.calls.add(call)
        try:
            async for message in call:
                version, _ = drive.received(game, cast(bytes, message))
                if version >= game.table.final:
                    call.cancel()
                    return
                action = await drive.acting(game, seat, version)
                if action is not None:
                    await submits[index](action, metadata=tokens[seat])
                    drive.messages += 1  # its response
        finally:
            drive.calls.discard(call)

    async def lobby_watch(game: _Game, index: int, request: bytes) -> None:
        call = watches[index](request, metadata=lobby)
        drive.calls.add(call)
        try:
            async for message in call:
                data = cast(bytes, message)
                game.lobby_last = head(data)[0]
                if game.lobby_last > 1:
                    drive.messages += 1
                    drive.received_bytes += len(data)
                if game.lobby_last >= game.table.final:
                    call.cancel()
                    return
        finally:
            drive.calls.discard(call)

    async def play(game: _Game) -> None:
        nonlocal turn
        turn += 1
        index = turn % len(channels)
        request = game_service_pb2.WatchGameRequest(name=game.table.name).SerializeToString()
        await asyncio.gather(
            lobby_watch(game, index, request),
            *(seat_watch(game, seat, index, request) for seat in range(game.seats)),
        )

    return await _timed(drive, play, seconds, pids, channels)


async def _timed(
    drive: Drive,
    play: Callable[[_Game], Awaitable[None]],
    seconds: float,
    pids: dict[str, int],
    channels: list[grpc.aio.Channel],
) -> Result:
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    client_before = time.process_time()
    elapsed = await drive.run(play, seconds)
    client = time.process_time() - client_before
    spent = {name: cpu_seconds(pid) - before[name] for name, pid in pids.items()}
    await drive.close()
    for channel in channels:
        await channel.close(None)
    server = spent.pop("server")
    return Result(
        drive.delivered,
        elapsed,
        server,
        {**spent, "client": client},
        drive.messages,
        drive.received_bytes,
        drive.latencies,
        drive.answers,
        statistics.mean(g.table.final - 1 for g in drive.games) if drive.games else 0.0,
    )


async def run_unary(
    kind: str,
    address: str,
    *,
    scripts: list[Script],
    tokens: dict[int, Metadata],
    request_bytes: int,
    seconds: float,
    concurrency: int,
    pids: dict[str, int],
) -> Result:
    """Unary calls by ``concurrency`` clients: today's SubmitAction (minimal,
    nobody watching: ``service_bench.run_service``) or the floor's
    (``service_bench.run_floor``)."""
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    client_before = time.process_time()
    if kind == "floor":
        done, elapsed, latencies = await run_floor(address, request_bytes, seconds, concurrency)
    else:
        done, elapsed, latencies = await run_service(
            address,
            scripts=scripts,
            tokens=tokens,
            seconds=seconds,
            concurrency=concurrency,
            minimal=True,
        )
    client = time.process_time() - client_before
    spent = {name: cpu_seconds(pid) - before[name] for name, pid in pids.items()}
    server = spent.pop("server")
    return Result(done, elapsed, server, {**spent, "client": client}, done, 0, latencies)


# ---------------------------------------------------------------- idle sessions


@dataclass(slots=True)
class IdleFigures:
    sessions: int
    games: int
    channels: int
    rss_before_kb: int
    rss_after_kb: int
    rss_closed_kb: int
    redis_clients_before: int
    redis_clients_after: int
    redis_clients_closed: int
    open_seconds: float
    open_cpu_ms: float
    """The game service's CPU per session opened (and its first message sent)."""
    close_cpu_ms: float
    """... and per session closed (the client cancelled its stream)."""
    move_ms: float
    """A move in one game, to the last of that game's idle sessions."""


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def redis_clients(redis: Redis) -> int:
    """Client connections to Redis, this benchmark's own one excepted."""
    return len(cast(list[Any], redis.client_list())) - 1


async def run_idle(
    address: str,
    *,
    redis: Redis,
    pid: int,
    sessions: int,
    scripts: list[Script],
    tokens: dict[int, Metadata],
    lobby: Metadata,
) -> IdleFigures:
    per_game = 6 + _IDLE_SPECTATORS
    games = scripts[: -(-sessions // per_game)]
    print(f"  idle: {len(games)} games, then {sessions:,} sessions", file=sys.stderr)
    await asyncio.wait_for(create_games(address, games, lobby), 120)
    spectators = [
        (
            (
                "authorization",
                "Bearer " + issue_token(DEV_SECRET, f"bench-spectator-{k}", role="spectator"),
            ),
        )
        for k in range(_IDLE_SPECTATORS)
    ]
    await asyncio.sleep(1.0)
    rss_before = rss_kb(pid)
    clients_before = redis_clients(redis)
    count = -(-sessions // _IDLE_STREAMS_PER_CHANNEL)
    channels = _channels(address, count)
    plays = [
        c.stream_stream(_PLAY, request_serializer=None, response_deserializer=None)
        for c in channels
    ]
    calls: dict[int, grpc.aio.StreamStreamCall[bytes, bytes]] = {}
    followers: list[asyncio.Task[None]] = []
    queues: dict[str, list[asyncio.Queue[bytes]]] = {}
    loop = asyncio.get_running_loop()

    async def follow(
        call: grpc.aio.StreamStreamCall[bytes, bytes], name: str, got: asyncio.Future[bytes]
    ) -> None:
        try:
            message = await call.read()
        except BaseException as exc:
            got.set_exception(exc)
            raise
        got.set_result(cast(bytes, message))
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        queues.setdefault(name, []).append(queue)
        while (message := await call.read()) is not EOF:
            queue.put_nowait(cast(bytes, message))

    start = time.perf_counter()
    cpu_start = cpu_seconds(pid)
    semaphore = asyncio.Semaphore(200)

    async def open_one(index: int) -> None:
        script = games[index // per_game]
        slot = index % per_game
        metadata = tokens[slot] if slot < 6 else spectators[slot - 6]
        name = "games/" + script.create.game_id
        async with semaphore:
            call = plays[index % len(plays)](None, metadata=metadata)
            calls[index] = call
            await call.write(_open_request(name, minimal=False))
            got: asyncio.Future[bytes] = loop.create_future()
            followers.append(asyncio.create_task(follow(call, name, got)))
            message = await asyncio.wait_for(got, 60)
        if head(message)[0] != 1:
            raise RuntimeError(f"session {index} opened at {head(message)[0]}, not version 1")

    await asyncio.gather(*(open_one(i) for i in range(sessions)))
    open_seconds = time.perf_counter() - start
    open_cpu = cpu_seconds(pid) - cpu_start
    await asyncio.sleep(2.0)
    rss_after = rss_kb(pid)
    clients_after = redis_clients(redis)

    # One move in the first game: every one of its idle sessions hears it.
    script = games[0]
    name = "games/" + script.create.game_id
    seat, _full, lean = script.steps[0]
    sent = game_service_pb2.SubmitActionRequest.FromString(lean)
    seat_call = calls[seat]  # sessions 0..5: the seats of games[0]
    moved = time.perf_counter()
    await seat_call.write(
        game_service_pb2.PlayRequest(
            action=game_service_pb2.SessionAction(
                action=sent.action, etag=sent.etag, request_id=sent.request_id
            )
        ).SerializeToString()
    )
    heard = await asyncio.wait_for(asyncio.gather(*(q.get() for q in queues[name])), 30)
    move_ms = (time.perf_counter() - moved) * MS
    if len(heard) != min(per_game, sessions) or any(head(m)[0] != 2 for m in heard):
        raise RuntimeError("not every idle session of the game heard its move")

    cpu_close = cpu_seconds(pid)
    for call in calls.values():
        call.cancel()
    for task in followers:
        task.cancel()
    await asyncio.gather(*followers, return_exceptions=True)
    for channel in channels:
        await channel.close(None)
    await asyncio.sleep(2.0)
    close_cpu = cpu_seconds(pid) - cpu_close
    return IdleFigures(
        sessions,
        len(games),
        count,
        rss_before,
        rss_after,
        rss_kb(pid),
        clients_before,
        clients_after,
        redis_clients(redis),
        open_seconds,
        open_cpu / sessions * MS,
        close_cpu / sessions * MS,
        move_ms,
    )


# ---------------------------------------------------------------- the run


def lobby_group(redis: Redis) -> tuple[int, int]:
    """The lobby's consumer group over every shard's ended-games stream:
    (entries read, entries not yet read)."""
    read = lag = 0
    for shard in range(SHARDS):
        stream = ended_stream(shard)
        if not redis.exists(stream):
            continue
        for group in cast(list[dict[str, Any]], redis.xinfo_groups(stream)):
            if group["name"] in (GROUP, GROUP.encode()):
                read += int(group.get("entries-read") or 0)
                lag += int(group.get("lag") or 0)
    return read, lag


def start_lobby(env: dict[str, str], game_port: int) -> tuple[Any, int]:
    return start_process(
        [sys.executable, "-m", "truc_lobby"],
        {
            **env,
            "TRUC_LOBBY_PORT": "0",
            "TRUC_GAME_ADDRESS": f"127.0.0.1:{game_port}",
            "TRUC_LOBBY_ROLE": "api",
            "TRUC_BOT_WAIT_SECONDS": "0",
            "TRUC_LOG_LEVEL": "INFO",
        },
    )


def _median(results: list[Result], value: Callable[[Result], float]) -> float:
    return statistics.median(value(r) for r in results)


def summary(results: list[Result]) -> dict[str, Any]:
    moves = sum(r.moves for r in results)
    return {
        "moves_per_second": round(_median(results, lambda r: r.per_second)),
        "server_cpu_ms_per_move": round(_median(results, lambda r: r.cpu_ms), 3),
        "server_cpu_ms_per_move_runs": [round(r.cpu_ms, 3) for r in results],
        "p50_ms": round(_median(results, lambda r: percentile(r.latencies, 0.5) * MS), 2)
        if results[0].latencies
        else 0.0,
        "p99_ms": round(_median(results, lambda r: percentile(r.latencies, 0.99) * MS), 2)
        if results[0].latencies
        else 0.0,
        "messages_per_move": round(sum(r.messages for r in results) / max(1, moves), 2),
        "bytes_per_message": round(
            sum(r.received_bytes for r in results) / max(1, sum(r.messages for r in results))
        ),
        **{
            f"{name}_cpu_ms_per_move": round(
                statistics.median(r.other_ms(name) for r in results), 3
            )
            for name in results[0].others
        },
        "answers": sum(r.answers for r in results),
        "moves_per_game": round(statistics.mean(r.moves_per_game for r in results), 1),
    }


@dataclass(slots=True)
class Setup:
    """The scripted games of a run and the calls' metadata."""

    batches: dict[tuple[str, int], list[Script]]
    idle_scripts: list[Script]
    tokens: dict[int, Metadata]
    lobby: Metadata
    state_bytes: int
    request_bytes: int


_RATES: Final = {"session": 2500, "today": 1200, "session-minimal": 3500, "today-unwatched": 2500}
"""Scripted actions for each timed run, at up to this many moves/s."""
_PARTS: Final = {
    "watched": ("session", "today"),
    "unwatched": ("session-minimal", "today-unwatched"),
    "idle": (),
}
"""The parts of the benchmark (``--parts``) and their timed runs."""


def kinds_of(args: argparse.Namespace) -> list[str]:
    return [kind for part in args.parts for kind in _PARTS[part]]


def setup(args: argparse.Namespace) -> Setup:
    rng = random.Random(2028)
    # Longer scripted games (more fixed deals) spread each game's session opens
    # over more moves; service_bench's default of two keeps watch_bench's games.
    service_bench.DEALS_PER_GAME = args.deals
    players = [f"bench-p{s}" for s in range(6)]
    budgets = [
        ((kind, r), args.seconds * rate)
        for r in range(args.rounds)
        for kind, rate in _RATES.items()
        if kind in kinds_of(args)
    ]
    idle_games = -(-args.idle // (6 + _IDLE_SPECTATORS)) if "idle" in args.parts else 0
    batches = script_batches(
        [*budgets, (("warm-up", 0), 400), (("idle", 0), idle_games * 40)],
        rng,
        players,
    )
    idle_scripts = batches.pop(("idle", 0))[:idle_games] if idle_games else []
    if len(idle_scripts) < idle_games:
        raise RuntimeError("too few idle games scripted")
    scripts = [script for batch in batches.values() for script in batch]
    sample = tables(scripts[:1], "session")[0].acts
    tokens, lobby = bench_tokens(players)
    return Setup(
        batches,
        idle_scripts,
        tokens,
        lobby,
        int(statistics.mean(s.state_bytes for s in scripts)),
        len(next(a for seat in sample for a in seat.values())),
    )


async def timed_runs(
    args: argparse.Namespace, run: Setup, redis_server: RedisServer, redis: Redis
) -> tuple[dict[str, list[Result]], int, int, float]:
    """The interleaved timed runs (game service, lobby and floor up); the lobby's
    consumer group's ends read during them, its lag at the end, and the lobby's
    CPU seconds per second while nothing is played (its matcher and sweeps)."""
    results: dict[str, list[Result]] = {
        name: []
        for name in (
            "session",
            "today",
            "floor-play",
            "session-minimal",
            "today-unwatched",
            "floor-call",
        )
    }
    env = bench_env(redis_server.url)
    game, port = start_game_service(env)
    processes = [game]
    try:
        lobby_process, _ = start_lobby(env, port)
        processes.append(lobby_process)
        address = f"127.0.0.1:{port}"
        await create_games(address, [s for b in run.batches.values() for s in b], run.lobby)
        pids = {"server": game.pid, "lobby": lobby_process.pid, "redis": redis_server.pid}
        warm = await run_sessions(
            address,
            tables(run.batches[("warm-up", 0)], "session"),
            tokens=run.tokens,
            minimal=False,
            seconds=1.5,
            concurrency=4,
            pids=pids,
        )
        floor, floor_port = start_process(
            [
                sys.executable,
                str(HERE / "floor_server.py"),
                redis_server.url,
                str(run.state_bytes),
                "700",  # a SubmitAction response, as service_bench's floor
                str(warm.received_bytes // max(1, warm.messages)),  # a session message
            ],
            env,
        )
        processes.append(floor)
        floor_address = f"127.0.0.1:{floor_port}"
        floor_pids = {"server": floor.pid, "redis": redis_server.pid}
        await run_floor(floor_address, run.request_bytes, 0.5, 2)  # warm-up
        ends_before = lobby_group(redis)[0]
        lobby_before = cpu_seconds(lobby_process.pid)
        await asyncio.sleep(2.0)
        lobby_idle = (cpu_seconds(lobby_process.pid) - lobby_before) / 2.0
        for r in range(args.rounds):
            for kind in kinds_of(args):
                batch = run.batches[(kind, r)]
                started = time.perf_counter()
                done: list[tuple[str, Result]] = []
                if kind in ("session", "session-minimal"):
                    minimal = kind == "session-minimal"
                    done.append(
                        (
                            kind,
                            await run_sessions(
                                address,
                                tables(batch, "session"),
                                tokens=run.tokens,
                                minimal=minimal,
                                seconds=args.seconds,
                                concurrency=args.games,
                                pids=pids,
                            ),
                        )
                    )
                    if minimal:
                        floor_result = await run_unary(
                            "floor",
                            floor_address,
                            scripts=[],
                            tokens=run.tokens,
                            request_bytes=run.request_bytes,
                            seconds=args.seconds,
                            concurrency=args.games,
                            pids=floor_pids,
                        )
                    else:
                        floor_result = await run_floor_sessions(
                            floor_address,
                            tables(batch, "floor"),
                            seconds=args.seconds,
                            concurrency=args.games,
                            pids=floor_pids,
                            tag=f"r{r}",
                        )
                    done.append(("floor-call" if minimal else "floor-play", floor_result))
                elif kind == "today":
                    done.append(
                        (
                            kind,
                            await run_today(
                                address,
                                tables(batch, "today"),
                                tokens=run.tokens,
                                lobby=run.lobby,
                                seconds=args.seconds,
                                concurrency=args.games,
                                pids=pids,
                            ),
                        )
                    )
                else:
                    done.append(
                        (
                            kind,
                            await run_unary(
                                "today",
                                address,
                                scripts=batch,
                                tokens=run.tokens,
                                request_bytes=run.request_bytes,
                                seconds=args.seconds,
                                concurrency=args.games,
                                pids=pids,
                            ),
                        )
                    )
                for name, result in done:
                    results[name].append(result)
                    print(
                        f"  round {r + 1} {name:<16} {result.per_second:>7,.0f} moves/s  "
                        f"server CPU {result.cpu_ms:.3f} ms/move",
                        file=sys.stderr,
                    )
                print(f"    ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
        await asyncio.sleep(1.0)
        ends_read, ends_lag = lobby_group(redis)
        return results, ends_read - ends_before, ends_lag, lobby_idle
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(15)


async def bench(args: argparse.Namespace, run: Setup) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    with RedisServer() as redis_server:
        redis = Redis.from_url(redis_server.url)
        try:
            if kinds_of(args):
                results, ends_read, ends_lag, lobby_idle = await timed_runs(
                    args, run, redis_server, redis
                )
                figures.update({name: summary(found) for name, found in results.items() if found})
                figures["lobby_ends_read"] = ends_read
                figures["lobby_ends_lag"] = ends_lag
                figures["lobby_idle_cpu_per_second"] = round(lobby_idle, 4)
            if "idle" in args.parts:
                idle_game, idle_port = start_game_service(bench_env(redis_server.url))
                try:
                    idle = await run_idle(
                        f"127.0.0.1:{idle_port}",
                        redis=redis,
                        pid=idle_game.pid,
                        sessions=args.idle,
                        scripts=run.idle_scripts,
                        tokens=run.tokens,
                        lobby=run.lobby,
                    )
                finally:
                    idle_game.terminate()
                    idle_game.wait(15)
                figures["idle"] = dataclasses.asdict(idle)
        finally:
            redis.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=6.0, help="per timed run")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--games", type=int, default=16, help="games played at once")
    parser.add_argument("--idle", type=int, default=5000, help="idle sessions held")
    parser.add_argument(
        "--deals", type=int, default=2, help="fixed deals per scripted game (default 2)"
    )
    parser.add_argument(
        "--parts",
        type=lambda text: text.split(","),
        default=list(_PARTS),
        help=f"run only these parts (comma-separated; default {','.join(_PARTS)})",
    )
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    if unknown := set(args.parts) - set(_PARTS):
        parser.error(f"unknown parts: {', '.join(sorted(unknown))}")
    load = Path("/proc/loadavg").read_text().split()[0]
    figures = uvloop.run(bench(args, setup(args)))
    report(args, figures, load)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


def _line(figures: dict[str, Any], label: str, name: str, note: str = "") -> None:
    f = figures[name]
    latency = f"p50 {f['p50_ms']:5.2f} ms  p99 {f['p99_ms']:6.2f} ms" if f["p50_ms"] else " " * 29
    print(
        f"  {label:<42} {f['moves_per_second']:>6,}/s  "
        f"server CPU {f['server_cpu_ms_per_move']:.3f} ms  {latency}  "
        f"{f['messages_per_move']:.1f} msg{note}"
    )
    if f["answers"]:
        print(f"    (warning: {f['answers']} refusals or repeats received)")


def report(args: argparse.Namespace, figures: dict[str, Any], load: str) -> None:
    print(
        f"session: Play sessions through gRPC + Redis, {args.games} games at once, "
        f"{args.seconds:.0f} s per run, medians of {args.rounds} rounds; uvloop in every "
        f"process (load average {load} at the start)"
    )
    if "session" in figures:
        session, today, floor = figures["session"], figures["today"], figures["floor-play"]
        print("1. watched play, six seats per game (per move; latency: an action to the last seat)")
        _line(figures, "sessions, six seats, lobby follows ends", "session", "  target <= 0.8 ms")
        _line(figures, "today: SubmitAction + 6 seat + lobby Watch", "today")
        _line(figures, "floor: stream, 1 EVALSHA+PUBLISH, 6 pushes", "floor-play")
        print(
            f"  sessions: {session['moves_per_second'] / today['moves_per_second']:.2f}x today's "
            f"moves/s at {session['server_cpu_ms_per_move'] / today['server_cpu_ms_per_move']:.2f}x"
            f" its server CPU per move; "
            f"{session['server_cpu_ms_per_move'] / floor['server_cpu_ms_per_move']:.2f}x the "
            f"floor's CPU; {session['moves_per_game']:.1f} moves per game (its six sessions "
            "opened and closed in the runs)"
        )
        if "idle" in figures:
            opens = figures["idle"]["open_cpu_ms"] * 6 / session["moves_per_game"]
            print(
                f"  of each move's server CPU, about {opens:.3f} ms is its game's six session "
                f"opens ({figures['idle']['open_cpu_ms']:.2f} ms each, part 3)"
            )
        idle_share = figures["lobby_idle_cpu_per_second"] * MS / session["moves_per_second"]
        print(
            f"  per move also: Redis CPU {session['redis_cpu_ms_per_move']:.3f} ms "
            f"(today {today['redis_cpu_ms_per_move']:.3f}); lobby process "
            f"{session['lobby_cpu_ms_per_move']:.3f} ms, of which {idle_share:.3f} its idle "
            f"work (today, with its WatchGame per game, {today['lobby_cpu_ms_per_move']:.3f}); "
            "this client "
            f"{session['client_cpu_ms_per_move']:.3f} ms; "
            f"{session['bytes_per_message']:,} B per session message"
        )
        print(
            f"  the lobby's consumer group read {figures['lobby_ends_read']:,} game ends during "
            f"the runs (lag {figures['lobby_ends_lag']} at the end); a move sends it nothing"
        )
    if "session-minimal" in figures:
        minimal, call = figures["session-minimal"], figures["floor-call"]
        print("2. unwatched actions: minimal views, nobody but the game's six seats' sessions")
        _line(figures, "sessions, minimal views", "session-minimal", "  target <= 0.35 ms")
        _line(figures, "floor: unary GET + EVALSHA", "floor-call")
        _line(figures, "today: SubmitAction (minimal), nobody watching", "today-unwatched")
        print(
            f"  sessions: {minimal['moves_per_second'] / call['moves_per_second']:.0%} of the "
            "floor's calls/s (target >= 100%)"
        )
    if "idle" in figures:
        idle = IdleFigures(**figures["idle"])
        print(
            f"3. idle sessions: {idle.sessions:,} on one replica over {idle.games} games "
            f"(6 seats + {_IDLE_SPECTATORS} spectators each), {idle.channels} HTTP/2 "
            f"connections, opened in {idle.open_seconds:.1f} s "
            f"({idle.open_cpu_ms:.2f} ms server CPU per open, {idle.close_cpu_ms:.2f} per close)"
        )
        print(
            f"  game service RSS {idle.rss_before_kb / 1024:,.1f} MB -> "
            f"{idle.rss_after_kb / 1024:,.1f} MB "
            f"(+{(idle.rss_after_kb - idle.rss_before_kb) / idle.sessions:.1f} KB per session; "
            f"{idle.rss_closed_kb / 1024:,.1f} MB once they closed)"
        )
        print(
            f"  Redis client connections {idle.redis_clients_before} -> "
            f"{idle.redis_clients_after} ({idle.redis_clients_closed} once closed; the pool's "
            "bound is TRUC_REDIS_MAX_CONNECTIONS + pub/sub): none per session; a move reached "
            f"its game's {6 + _IDLE_SPECTATORS} idle sessions in {idle.move_ms:.1f} ms"
        )


if __name__ == "__main__":
    main()
