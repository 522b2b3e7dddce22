"""REST benchmark (``make bench``): SubmitAction through the REST gateway beside
SubmitAction over gRPC, in the same run, on the same stack, with the same load.

1. A bundled Redis, one game-service process (test flag on, no rate limit) and
   one gateway process in front of it.
2. Scripted games as in ``service_bench.py`` (fixed deals, every action computed
   before the clock starts). Timed phases, each on fresh games: ``--concurrency``
   clients each play whole games, one SubmitAction at a time with the etag,
   over gRPC (a grpc.aio channel) and then over REST (``POST
   /v1/games/{game}:submitAction`` with a JSON body, aiohttp keep-alive
   connections); then both again at light load (2 clients), where latency is
   not queueing.

Prints actions/s and p50/p99 for each, the REST/gRPC ratios, and the CPU per
action of the game service and of the gateway.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from pathlib import Path

import aiohttp
import uvloop
from google.protobuf import json_format
from truc.v1 import game_service_pb2

from service_bench import (
    Script,
    cpu_seconds,
    create_games,
    make_script,
    percentile,
    run_service,
    start_process,
)
from truc_dev_redis import RedisServer
from truc_game.config import DEV_SECRET
from truc_service.tokens import issue_token

Result = tuple[int, float, list[float]]


def rest_steps(script: Script, minimal: bool) -> list[tuple[int, str, bytes]]:
    """(seat, path, JSON body) of each scripted SubmitAction."""
    steps = []
    for seat, full, lean in script.steps:
        request = game_service_pb2.SubmitActionRequest.FromString(lean if minimal else full)
        body = json_format.MessageToDict(request)
        del body["name"]
        steps.append((seat, f"/v1/{request.name}:submitAction", json.dumps(body).encode()))
    return steps


async def run_rest(
    url: str,
    *,
    games: list[list[tuple[int, str, bytes]]],
    tokens: dict[int, str],
    seconds: float,
    concurrency: int,
) -> Result:
    connector = aiohttp.TCPConnector(limit=concurrency)
    headers = {
        s: {"Authorization": "Bearer " + t, "Content-Type": "application/json"}
        for s, t in tokens.items()
    }
    latencies: list[float] = []
    queue = list(reversed(games))
    deadline = time.perf_counter() + seconds
    done = 0
    async with aiohttp.ClientSession(url, connector=connector) as session:

        async def worker() -> None:
            nonlocal done
            while queue and time.perf_counter() < deadline:
                for seat, path, body in queue.pop():
                    start = time.perf_counter()
                    async with session.post(path, data=body, headers=headers[seat]) as response:
                        payload = await response.read()
                    latencies.append(time.perf_counter() - start)
                    done += 1
                    assert response.status == 200, payload[:300]
                    if time.perf_counter() >= deadline:
                        return

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - start
    if not queue and time.perf_counter() < deadline - 0.5 and concurrency > 2:
        print("  (warning: the scripted games ran out before the time was up)", file=sys.stderr)
    return done, elapsed, latencies


def scripts_for(budget: float, rng: random.Random, players: list[str], first: int) -> list[Script]:
    batch: list[Script] = []
    steps = 0
    while steps < budget:
        script = make_script(first + len(batch), rng, players)
        batch.append(script)
        steps += len(script.steps)
    return batch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--minimal", action="store_true", help="RESPONSE_VIEW_MINIMAL answers")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    rng = random.Random(2027)
    players = [f"rest-p{s}" for s in range(6)]
    phases = [
        ("grpc", args.concurrency, args.seconds, 4000),
        ("rest", args.concurrency, args.seconds, 2500),
        ("grpc-light", 2, 3.0, 2000),
        ("rest-light", 2, 3.0, 1500),
        ("warm-up", 2, 1.0, 400),
    ]
    batches: dict[str, list[Script]] = {}
    made = 0
    for phase, _, seconds, rate in phases:
        batches[phase] = scripts_for(seconds * rate, rng, players, made)
        made += len(batches[phase])
    tokens = {s: issue_token(DEV_SECRET, p, ttl_seconds=3600) for s, p in enumerate(players)}
    metadata = {s: (("authorization", "Bearer " + t),) for s, t in tokens.items()}
    lobby = (("authorization", "Bearer " + issue_token(DEV_SECRET, "bench-lobby", role="lobby")),)
    results: dict[str, tuple[Result, float, float]] = {}

    with RedisServer() as redis:
        env = {
            **os.environ,
            "REDIS_URL": redis.url,
            "TRUC_GAME_PORT": "0",
            "TRUC_GATEWAY_PORT": "0",
            "TRUC_DEV_MODE": "1",
            "TRUC_ALLOW_FIXED_DEALS": "1",
            "TRUC_RATE_ACTIONS": "0",
            "TRUC_LOG_LEVEL": "INFO",
        }
        env.pop("TRUC_JWT_SECRET", None)
        game, game_port = start_process([sys.executable, "-m", "truc_game"], env)
        address = f"127.0.0.1:{game_port}"
        gateway, gateway_port = start_process(
            [sys.executable, "-m", "truc_gateway"], {**env, "TRUC_GAME_ADDRESS": address}
        )
        url = f"http://127.0.0.1:{gateway_port}"
        try:
            uvloop.run(create_games(address, [s for b in batches.values() for s in b], lobby))
            warm = batches["warm-up"]
            half = len(warm) // 2
            uvloop.run(
                run_service(address, scripts=warm[:half], tokens=metadata, seconds=1, concurrency=2)
            )
            uvloop.run(
                run_rest(
                    url,
                    games=[rest_steps(s, args.minimal) for s in warm[half:]],
                    tokens=tokens,
                    seconds=1,
                    concurrency=2,
                )
            )
            for phase, concurrency, seconds, _ in phases[:4]:
                batch = batches[phase]
                before = cpu_seconds(game.pid), cpu_seconds(gateway.pid)
                if phase.startswith("grpc"):
                    result = uvloop.run(
                        run_service(
                            address,
                            scripts=batch,
                            tokens=metadata,
                            seconds=seconds,
                            concurrency=concurrency,
                            minimal=args.minimal,
                        )
                    )
                else:
                    result = uvloop.run(
                        run_rest(
                            url,
                            games=[rest_steps(s, args.minimal) for s in batch],
                            tokens=tokens,
                            seconds=seconds,
                            concurrency=concurrency,
                        )
                    )
                results[phase] = (
                    result,
                    cpu_seconds(game.pid) - before[0],
                    cpu_seconds(gateway.pid) - before[1],
                )
        finally:
            for process in (gateway, game):
                process.terminate()
                process.wait(10)

    ms = 1000.0
    figures: dict[str, float] = {"concurrency": args.concurrency}
    for phase in ("grpc", "rest", "grpc-light", "rest-light"):
        (done, elapsed, latencies), game_cpu, gateway_cpu = results[phase]
        key = phase.replace("-", "_")
        figures[f"{key}_actions_per_second"] = round(done / elapsed)
        figures[f"{key}_p50_ms"] = round(percentile(latencies, 0.50) * ms, 3)
        figures[f"{key}_p99_ms"] = round(percentile(latencies, 0.99) * ms, 3)
        figures[f"{key}_game_cpu_ms_per_action"] = round(game_cpu / done * ms, 3)
        figures[f"{key}_gateway_cpu_ms_per_action"] = round(gateway_cpu / done * ms, 3)
    view = "minimal" if args.minimal else "full"
    print(
        f"rest: SubmitAction over REST (gateway -> gRPC) beside gRPC, {view} view, "
        f"{args.concurrency} clients, {args.seconds:.0f} s per run"
    )
    for label, key in (("gRPC", "grpc"), ("REST", "rest")):
        print(
            f"  {label:<5} {figures[f'{key}_actions_per_second']:>6,.0f} actions/s  "
            f"p50 {figures[f'{key}_p50_ms']:.2f} ms  p99 {figures[f'{key}_p99_ms']:.2f} ms  "
            f"CPU/action: game {figures[f'{key}_game_cpu_ms_per_action']:.3f} ms, "
            f"gateway {figures[f'{key}_gateway_cpu_ms_per_action']:.3f} ms"
        )
    ratio = figures["rest_actions_per_second"] / figures["grpc_actions_per_second"]
    print(f"  REST throughput is {ratio:.0%} of gRPC's (one more hop and JSON both ways)")
    print(
        f"  light load (2 clients): gRPC p50 {figures['grpc_light_p50_ms']:.2f} ms, "
        f"REST p50 {figures['rest_light_p50_ms']:.2f} ms "
        f"(+{figures['rest_light_p50_ms'] - figures['grpc_light_p50_ms']:.2f} ms per call)"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
