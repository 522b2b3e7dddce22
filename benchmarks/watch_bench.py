"""Watch benchmark: the game service's CPU per action when every game is watched.

1. A bundled Redis and one game-service process (test flag on, no rate limit).
2. Scripted games as in ``service_bench.py`` (fixed deals, every action computed
   before the clock starts; minimal SubmitAction responses, as ``truc load``
   sends them). Before a client plays a game it opens the game's watchers:
   ``--seats`` seat watchers (the seats' own tokens) and one watcher with the
   lobby's role, as the lobby's results follower (full view, or
   RESPONSE_VIEW_MINIMAL when the service supports it: phase ``lobby-minimal``).
3. Phases, each on fresh games: ``none`` (no watchers), ``full`` (six seats and
   the lobby, full views), ``lobby-minimal`` (six seats full, the lobby
   minimal). At the end of a phase the clock stops when every watcher has
   received every version made (streams are read as raw bytes, so the
   benchmark's own CPU stays small). The phases run ``--rounds`` times,
   interleaved, and the medians are printed.

Prints, per phase, actions/s, SubmitAction p50, watch messages delivered and
the game server's CPU per action (the figure to bring down).
``BENCH_PROFILE=FILE`` runs the game server under cProfile and writes its
profile to FILE.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import grpc
import uvloop
from truc.v1 import game_service_pb2

from service_bench import (
    Metadata,
    Script,
    bench_env,
    bench_tokens,
    cpu_seconds,
    create_games,
    percentile,
    script_batches,
    start_game_service,
)
from truc_dev_redis import RedisServer

_WATCH = "/truc.v1.GameService/WatchGame"
_SUBMIT = "/truc.v1.GameService/SubmitAction"
_HAS_MINIMAL_WATCH = "response_view" in game_service_pb2.WatchGameRequest.DESCRIPTOR.fields_by_name


@dataclass(slots=True)
class PhaseResult:
    actions: int
    elapsed: float
    cpu: float
    messages: int
    latencies: list[float]

    @property
    def per_second(self) -> float:
        return self.actions / self.elapsed

    @property
    def cpu_ms_per_action(self) -> float:
        return self.cpu / self.actions * 1000


async def run_phase(
    address: str,
    *,
    scripts: list[Script],
    tokens: dict[int, Metadata],
    lobby: Metadata,
    seats: int,
    lobby_view: str | None,
    seconds: float,
    concurrency: int,
    pid: int,
) -> PhaseResult:
    """Play ``scripts`` with their watchers for ``seconds``; CPU until every version arrived."""
    submit_channel = grpc.aio.insecure_channel(address)
    watch_channel = grpc.aio.insecure_channel(address)
    submit = submit_channel.unary_unary(
        _SUBMIT, request_serializer=None, response_deserializer=None
    )
    watch = watch_channel.unary_stream(
        _WATCH,
        request_serializer=game_service_pb2.WatchGameRequest.SerializeToString,
        response_deserializer=None,
    )
    latencies: list[float] = []
    queue = list(reversed(scripts))
    made: dict[str, int] = {}  # game name -> the last version made
    received: dict[tuple[str, int], int] = {}  # (game, watcher) -> messages received
    watchers: list[asyncio.Task[None]] = []
    done = 0

    async def follow(
        name: str,
        index: int,
        request: game_service_pb2.WatchGameRequest,
        metadata: Metadata,
    ) -> None:
        key = (name, index)
        received[key] = 0
        async for _ in watch(request, metadata=metadata):
            received[key] += 1

    def open_watchers(name: str) -> None:
        plain = game_service_pb2.WatchGameRequest(name=name)
        for seat in range(seats):
            watchers.append(asyncio.create_task(follow(name, seat, plain, tokens[seat])))
        if lobby_view is not None:
            request = game_service_pb2.WatchGameRequest(name=name)
            if lobby_view == "minimal":
                request.response_view = game_service_pb2.RESPONSE_VIEW_MINIMAL
            watchers.append(asyncio.create_task(follow(name, seats, request, lobby)))

    async def worker(deadline: float) -> None:
        nonlocal done
        while queue and time.perf_counter() < deadline:
            script = queue.pop()
            name = "games/" + script.create.game_id
            made[name] = 1
            open_watchers(name)
            for seat, _full, lean in script.steps:
                start = time.perf_counter()
                await submit(lean, metadata=tokens[seat])
                latencies.append(time.perf_counter() - start)
                made[name] += 1
                done += 1
                if time.perf_counter() >= deadline:
                    return

    cpu_before = cpu_seconds(pid)
    start = time.perf_counter()
    await asyncio.gather(*(worker(start + seconds) for _ in range(concurrency)))
    per_game = seats + (lobby_view is not None)
    expected = sum(made.values()) * per_game
    drain_until = time.perf_counter() + 60
    while sum(received.values()) < expected and time.perf_counter() < drain_until:
        await asyncio.sleep(0.005)
    elapsed = time.perf_counter() - start
    cpu = cpu_seconds(pid) - cpu_before
    messages = sum(received.values())
    if messages < expected:
        print(f"  (warning: {expected - messages} watch messages missing)", file=sys.stderr)
    if not queue and concurrency > 2:
        print("  (warning: the scripted games ran out before the time was up)", file=sys.stderr)
    for task in watchers:
        task.cancel()
    await asyncio.gather(*watchers, return_exceptions=True)
    await submit_channel.close(None)
    await watch_channel.close(None)
    return PhaseResult(done, elapsed, cpu, messages, latencies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--concurrency", type=int, default=16, help="games played at once")
    parser.add_argument("--seats", type=int, default=6, help="seat watchers per game")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--phases", help="run only these phases (comma-separated)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    phases: dict[str, tuple[int, str | None]] = {
        "none": (0, None),
        "full": (args.seats, "full"),
    }
    if _HAS_MINIMAL_WATCH:
        phases["lobby-minimal"] = (args.seats, "minimal")
    if args.phases:
        phases = {name: phases[name] for name in args.phases.split(",")}
    # Scripted actions for each run at up to this many actions/s.
    rate = {"none": 3000, "full": 1500, "lobby-minimal": 1500}
    rng = random.Random(2027)
    players = [f"bench-p{s}" for s in range(6)]
    runs = [(phase, r) for r in range(args.rounds) for phase in phases]
    budgets = [(run, args.seconds * rate[run[0]]) for run in runs]
    batches = script_batches([*budgets, (("warm-up", 0), 300)], rng, players)
    scripts = [script for batch in batches.values() for script in batch]
    tokens, lobby = bench_tokens(players)

    results: dict[str, list[PhaseResult]] = {phase: [] for phase in phases}
    with RedisServer() as redis:
        game, port = start_game_service(bench_env(redis.url))
        address = f"127.0.0.1:{port}"
        try:
            uvloop.run(create_games(address, scripts, lobby))
            common = {"address": address, "tokens": tokens, "lobby": lobby, "pid": game.pid}
            uvloop.run(
                run_phase(
                    scripts=batches[("warm-up", 0)],
                    seats=args.seats,
                    lobby_view="full",
                    seconds=1.0,
                    concurrency=2,
                    **common,  # type: ignore[arg-type]
                )
            )
            for phase, r in runs:
                seats, lobby_view = phases[phase]
                result = uvloop.run(
                    run_phase(
                        scripts=batches[(phase, r)],
                        seats=seats,
                        lobby_view=lobby_view,
                        seconds=args.seconds,
                        concurrency=args.concurrency,
                        **common,  # type: ignore[arg-type]
                    )
                )
                results[phase].append(result)
                print(
                    f"  round {r + 1} {phase:<13} {result.per_second:>7,.0f} actions/s  "
                    f"server CPU {result.cpu_ms_per_action:.3f} ms/action",
                    file=sys.stderr,
                )
        finally:
            game.terminate()
            game.wait(10)

    print(
        f"watch: SubmitAction (minimal) with watchers on every game, {args.concurrency} games "
        f"at once, {args.seconds:.0f} s per run, medians of {args.rounds} rounds"
    )
    figures: dict[str, dict[str, float]] = {}
    for phase, (seats, lobby_view) in phases.items():
        runs_of = results[phase]
        per_second = statistics.median(r.per_second for r in runs_of)
        cpu = statistics.median(r.cpu_ms_per_action for r in runs_of)
        p50 = statistics.median(percentile(r.latencies, 0.5) * 1000 for r in runs_of)
        per_action = statistics.median(r.messages / r.actions for r in runs_of)
        watchers = f"{seats} seats + lobby ({lobby_view})" if lobby_view else "no watchers"
        figures[phase] = {
            "actions_per_second": round(per_second),
            "server_cpu_ms_per_action": round(cpu, 3),
            "submit_p50_ms": round(p50, 3),
            "watch_messages_per_action": round(per_action, 2),
            "cpu_ms_per_action_runs": [round(r.cpu_ms_per_action, 3) for r in runs_of],  # type: ignore[dict-item]
        }
        print(
            f"  {watchers:<28} {per_second:>7,.0f} actions/s  p50 {p50:6.2f} ms  "
            f"{per_action:4.1f} messages/action  server CPU {cpu:.3f} ms/action"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
