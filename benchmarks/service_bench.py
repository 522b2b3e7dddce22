"""Service benchmark (``make bench``): SubmitAction through the real service and
Redis, beside the floor of the stack measured in the same run.

1. A bundled Redis and one game-service process (test flag on, no rate limit).
2. Scripted games: each game is created with fixed deals so that the client can
   compute, before the clock starts, every action of every seat with the local
   engine (a seeded random policy). Timed phase: ``--concurrency`` clients each
   play whole games, one SubmitAction at a time, with the etag.
3. The floor: a bare grpc.aio echo that does one Redis GET and one EVALSHA
   (GET + SET of a value the size of the stored game) per call, with requests
   and responses of the same sizes, driven the same way.

Prints actions/s and SubmitAction p50/p99 beside the floor's calls/s and
p50/p99, their ratios, and the game server's CPU per action; then the same at
light load (2 clients), where latency is not queueing. ``--rule-set`` plays
another game of the family (Truc y Flou by default). ``BENCH_PROFILE=FILE``
runs the game server under cProfile and writes its profile to FILE.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import grpc
import uvloop
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from truc_dev_redis import RedisServer
from truc_game.config import DEV_SECRET
from truc_protocol.convert import action_to_proto, card_to_proto, options_to_proto
from truc_rules.actions import PlayCard, SendDirective, SendSignal
from truc_rules.registry import (
    apply_action,
    deck_of,
    default_options,
    encode_state,
    legal_actions,
    new_game,
    seat_count,
)
from truc_rules.rule_set import RuleSet
from truc_service.tokens import issue_token

HERE = Path(__file__).resolve().parent
DEALS_PER_GAME = 2
_PORT = re.compile(r"listening on [^:]+:(\d+)")
_K = TypeVar("_K", bound=Hashable)


@dataclass(slots=True)
class Script:
    create: game_service_pb2.CreateGameRequest
    steps: list[tuple[int, bytes, bytes]]
    """(seat, serialized SubmitActionRequest, the same with RESPONSE_VIEW_MINIMAL) in order."""
    state_bytes: int


def make_script(
    index: int, rng: random.Random, players: list[str], rule_set: RuleSet = RuleSet.TRUC_Y_FLOU
) -> Script:
    options = default_options(rule_set)
    seats = seat_count(options)
    deals = []
    for _ in range(DEALS_PER_GAME):
        cards = list(deck_of(rule_set).cards)
        rng.shuffle(cards)
        deals.append(tuple(tuple(cards[s * 3 : s * 3 + 3]) for s in range(seats)))
    dealer = rng.randrange(seats)
    state = new_game(options, deals=deals, dealer=dealer).state
    name = f"games/bench-{index}-{rng.getrandbits(32):08x}"
    create = game_service_pb2.CreateGameRequest(
        game_id=name.split("/")[1],
        players=players[:seats],
        options=options_to_proto(options),
        dealer=dealer,
        turn_seconds=3600,  # no turn deadline acts for a game waiting for its run
        fixed_deals=[
            game_pb2.Deal(hands=[game_pb2.Hand(cards=[card_to_proto(c) for c in h]) for h in d])
            for d in deals
        ],
    )
    steps = []
    version = 1
    sizes = []
    while state.to_act is not None:
        seat = state.to_act
        legal = [
            a for a in legal_actions(state, seat) if not isinstance(a, SendSignal | SendDirective)
        ]
        plays = [a for a in legal if isinstance(a, PlayCard)]
        action = rng.choice(plays) if plays and rng.random() < 0.75 else rng.choice(legal)
        request = game_service_pb2.SubmitActionRequest(
            name=name,
            action=action_to_proto(action),
            etag=str(version),
            request_id=f"{index}-{version}",
        )
        full = request.SerializeToString()
        request.response_view = game_service_pb2.RESPONSE_VIEW_MINIMAL
        steps.append((seat, full, request.SerializeToString()))
        state = apply_action(state, seat, action).state
        sizes.append(len(encode_state(state)))
        version += 1
    return Script(create, steps, int(statistics.mean(sizes)))


def script_batches(
    budgets: Iterable[tuple[_K, float]],
    rng: random.Random,
    players: list[str],
    rule_set: RuleSet = RuleSet.TRUC_Y_FLOU,
) -> dict[_K, list[Script]]:
    """Fresh scripted games for each key: at least ``budget`` actions (game ids all distinct)."""
    batches: dict[_K, list[Script]] = {}
    made = 0
    for key, budget in budgets:
        batch: list[Script] = []
        steps = 0
        while steps < budget:
            script = make_script(made, rng, players, rule_set)
            made += 1
            batch.append(script)
            steps += len(script.steps)
        batches[key] = batch
    return batches


Metadata = tuple[tuple[str, str]]


def bench_tokens(players: list[str]) -> tuple[dict[int, Metadata], Metadata]:
    """The call metadata of each seat's player (by seat) and of the lobby."""
    tokens = {
        s: (("authorization", "Bearer " + issue_token(DEV_SECRET, p, ttl_seconds=3600)),)
        for s, p in enumerate(players)
    }
    lobby = (("authorization", "Bearer " + issue_token(DEV_SECRET, "bench-lobby", role="lobby")),)
    return tokens, lobby


def start_process(args: Sequence[str], env: dict[str, str]) -> tuple[subprocess.Popen[bytes], int]:
    process = subprocess.Popen(
        args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
    )
    assert process.stdout is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = process.stdout.readline().decode()
        found = _PORT.search(line)
        if found:
            # Keep reading its output, or a full pipe would block the process.
            threading.Thread(target=process.stdout.read, daemon=True).start()
            return process, int(found.group(1))
        if not line and process.poll() is not None:
            break
    raise RuntimeError(f"{args} did not start")


def bench_env(redis_url: str) -> dict[str, str]:
    """The environment of the benchmarks' servers: dev secret, test flag, no rate limit."""
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "TRUC_GAME_PORT": "0",
        "TRUC_METRICS_PORT": "0",
        "TRUC_DEV_MODE": "1",
        "TRUC_ALLOW_FIXED_DEALS": "1",
        "TRUC_RATE_ACTIONS": "0",
        # The benchmarks' few players sit in every game: their streams are
        # counted (the leases' cost is measured) but never refused.
        "TRUC_MAX_STREAMS_PER_PLAYER": "1000000",
        "TRUC_LOG_LEVEL": "WARNING",
    }
    env.pop("TRUC_JWT_SECRET", None)
    return env


def start_game_service(env: dict[str, str]) -> tuple[subprocess.Popen[bytes], int]:
    """A game-service process (under cProfile, writing to ``$BENCH_PROFILE``, if set)."""
    command = [sys.executable, "-m", "truc_game"]
    if os.environ.get("BENCH_PROFILE"):
        command[1:1] = ["-m", "cProfile", "-o", os.environ["BENCH_PROFILE"]]
    return start_process(command, {**env, "TRUC_LOG_LEVEL": "INFO"})


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run_service(
    address: str,
    *,
    scripts: list[Script],
    tokens: dict[int, tuple[tuple[str, str]]],
    seconds: float,
    concurrency: int,
    minimal: bool = False,
) -> tuple[int, float, list[float]]:
    channel = grpc.aio.insecure_channel(address)
    submit = channel.unary_unary(
        "/truc.v1.GameService/SubmitAction",
        request_serializer=None,
        response_deserializer=game_service_pb2.SubmitActionResponse.FromString,
    )
    latencies: list[float] = []
    queue = list(reversed(scripts))
    deadline = time.perf_counter() + seconds
    done = 0

    async def worker() -> None:
        nonlocal done
        while queue and time.perf_counter() < deadline:
            script = queue.pop()
            for seat, full, lean in script.steps:
                request = lean if minimal else full
                start = time.perf_counter()
                response = await submit(request, metadata=tokens[seat])
                latencies.append(time.perf_counter() - start)
                done += 1
                assert response.game.etag
                if time.perf_counter() >= deadline:
                    return

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - start
    await channel.close(None)
    if not queue and time.perf_counter() < deadline - 0.5 and concurrency > 2:
        print("  (warning: the scripted games ran out before the time was up)", file=sys.stderr)
    return done, elapsed, latencies


async def run_floor(
    address: str, request_bytes: int, seconds: float, concurrency: int
) -> tuple[int, float, list[float]]:
    channel = grpc.aio.insecure_channel(address)
    call = channel.unary_unary(
        "/bench.Floor/Call", request_serializer=None, response_deserializer=None
    )
    payload = b"q" * request_bytes
    metadata = (("authorization", "Bearer " + "x" * 180),)
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds
    done = 0

    async def worker() -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            await call(payload, metadata=metadata)
            latencies.append(time.perf_counter() - start)
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - start
    await channel.close(None)
    return done, elapsed, latencies


async def create_games(address: str, scripts: list[Script], lobby: tuple[tuple[str, str]]) -> None:
    channel = grpc.aio.insecure_channel(address)
    client = game_service_pb2_grpc.GameServiceStub(channel)
    for i in range(0, len(scripts), 32):
        await asyncio.gather(
            *(client.CreateGame(s.create, metadata=lobby) for s in scripts[i : i + 32])
        )
    await channel.close(None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument(
        "--rule-set",
        type=RuleSet,
        choices=list(RuleSet),
        default=RuleSet.TRUC_Y_FLOU,
        help="the game of the family to play (default: truc_y_flou)",
    )
    args = parser.parse_args()

    rng = random.Random(2026)
    players = [f"bench-p{s}" for s in range(6)]
    # Enough scripted actions for each phase at up to 5,000 actions/s, plus a warm-up.
    budgets = {"full": args.seconds * 5000, "minimal": args.seconds * 5000, "light": 3 * 5000}
    batches = script_batches([*budgets.items(), ("warm-up", 200)], rng, players, args.rule_set)
    scripts = [script for batch in batches.values() for script in batch]
    tokens, lobby = bench_tokens(players)
    sample = game_service_pb2.SubmitActionRequest.FromString(
        scripts[0].steps[min(5, len(scripts[0].steps) - 1)][1]
    )
    phases = [
        ("full", args.concurrency, args.seconds),
        ("minimal", args.concurrency, args.seconds),
        ("light", 2, 3.0),
    ]
    results: dict[str, tuple[int, float, list[float], float]] = {}
    request_bytes = len(sample.SerializeToString())
    state_bytes = int(statistics.mean(s.state_bytes for s in scripts))

    with RedisServer() as redis:
        env = bench_env(redis.url)
        game, game_port = start_game_service(env)
        try:
            address = f"127.0.0.1:{game_port}"
            uvloop.run(create_games(address, scripts, lobby))
            warm_up = batches["warm-up"]
            uvloop.run(
                run_service(address, scripts=warm_up, tokens=tokens, seconds=1.0, concurrency=2)
            )
            for phase, concurrency, seconds in phases:
                batch = batches[phase]
                cpu_before = cpu_seconds(game.pid)
                done, elapsed, latencies = uvloop.run(
                    run_service(
                        address,
                        scripts=batch,
                        tokens=tokens,
                        seconds=seconds,
                        concurrency=concurrency,
                        minimal=phase == "minimal",
                    )
                )
                results[phase] = (done, elapsed, latencies, cpu_seconds(game.pid) - cpu_before)
        finally:
            game.terminate()
            game.wait(10)

        # The response size of a typical SubmitAction, for the floor.
        response_bytes = 700
        floor, floor_port = start_process(
            [
                sys.executable,
                str(HERE / "floor_server.py"),
                redis.url,
                str(state_bytes),
                str(response_bytes),
            ],
            env,
        )
        try:
            address = f"127.0.0.1:{floor_port}"
            uvloop.run(run_floor(address, request_bytes, 1.0, 2))  # warm-up
            floor_cpu_before = cpu_seconds(floor.pid)
            calls, floor_elapsed, floor_latencies = uvloop.run(
                run_floor(address, request_bytes, args.seconds, args.concurrency)
            )
            floor_cpu = cpu_seconds(floor.pid) - floor_cpu_before
            _, _, light_floor, _ = *uvloop.run(run_floor(address, request_bytes, 3.0, 2)), 0.0
        finally:
            floor.terminate()
            floor.wait(10)

    ms = 1000.0
    actions, elapsed, latencies, cpu = results["full"]
    lean, lean_elapsed, lean_latencies, lean_cpu = results["minimal"]
    _, _, light, _ = results["light"]
    figures = {
        "rule_set": str(args.rule_set),
        "concurrency": args.concurrency,
        "submit_actions_per_second": round(actions / elapsed),
        "submit_p50_ms": round(percentile(latencies, 0.50) * ms, 3),
        "submit_p99_ms": round(percentile(latencies, 0.99) * ms, 3),
        "server_cpu_ms_per_action": round(cpu / actions * ms, 3),
        "minimal_actions_per_second": round(lean / lean_elapsed),
        "minimal_p50_ms": round(percentile(lean_latencies, 0.50) * ms, 3),
        "minimal_p99_ms": round(percentile(lean_latencies, 0.99) * ms, 3),
        "minimal_server_cpu_ms_per_action": round(lean_cpu / lean * ms, 3),
        "floor_calls_per_second": round(calls / floor_elapsed),
        "floor_p50_ms": round(percentile(floor_latencies, 0.50) * ms, 3),
        "floor_p99_ms": round(percentile(floor_latencies, 0.99) * ms, 3),
        "floor_cpu_ms_per_call": round(floor_cpu / calls * ms, 3),
        "light_load_submit_p50_ms": round(percentile(light, 0.50) * ms, 3),
        "light_load_floor_p50_ms": round(percentile(light_floor, 0.50) * ms, 3),
        "state_bytes": state_bytes,
        "request_bytes": request_bytes,
    }
    floor_rate = figures["floor_calls_per_second"]
    print(
        f"service ({args.rule_set}): SubmitAction through gRPC + Redis, "
        f"{args.concurrency} clients, {args.seconds:.0f} s per run"
    )
    print(
        f"  SubmitAction (full view)  {figures['submit_actions_per_second']:>6,} actions/s "
        f"({figures['submit_actions_per_second'] / floor_rate:.0%} of floor)  "
        f"p50 {figures['submit_p50_ms']:.2f} ms  p99 {figures['submit_p99_ms']:.2f} ms  "
        f"server CPU {figures['server_cpu_ms_per_action']:.3f} ms/action"
    )
    print(
        f"  SubmitAction (minimal)    {figures['minimal_actions_per_second']:>6,} actions/s "
        f"({figures['minimal_actions_per_second'] / floor_rate:.0%} of floor)  "
        f"p50 {figures['minimal_p50_ms']:.2f} ms  p99 {figures['minimal_p99_ms']:.2f} ms  "
        f"server CPU {figures['minimal_server_cpu_ms_per_action']:.3f} ms/action"
    )
    print(
        f"  floor (echo+GET+EVALSHA)  {floor_rate:>6,} calls/s          "
        f"p50 {figures['floor_p50_ms']:.2f} ms  p99 {figures['floor_p99_ms']:.2f} ms  "
        f"server CPU {figures['floor_cpu_ms_per_call']:.3f} ms/call"
    )
    print(
        f"  light load (2 clients): SubmitAction p50 {figures['light_load_submit_p50_ms']:.2f} ms, "
        f"floor p50 {figures['light_load_floor_p50_ms']:.2f} ms "
        f"({figures['light_load_submit_p50_ms'] / figures['light_load_floor_p50_ms']:.2f}x; "
        "goal <= 1.25x)"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
