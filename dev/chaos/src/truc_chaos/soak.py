"""``python -m truc_chaos soak`` (``make soak``): the load generator for a long while,
a fault every minute, and whether memory stays flat.

1. the chaos topology (:mod:`truc_chaos.processes`; finished games' logs kept 60 s,
   so what Redis holds levels off but for the small records the lobby keeps longer:
   tickets an hour, results and ratings for the history retention);
2. capacity: ``truc load`` (:mod:`truc_client.load`) with ``--players`` and no
   think time for ``--calibrate`` seconds gives the actions per second the stack
   sustains (read from the game replicas' ``truc_actions_total`` once the tables
   are seated: a short run's own average counts its start); short runs with a
   think time sized for half of it measure the rate again, the think time
   corrected after each (the per-action time a player needs for half the rate,
   minus the latency it measured), up to three, until the rate is within 10 % of
   half the capacity;
3. the soak: ``truc load`` at that pace for ``--minutes`` (fractions work), one
   fault every ``--fault-every`` seconds (the chaos faults in turn, but for the
   AOF cut: the checks have no acknowledgements of the load's players to excuse
   losses against), and every ``--sample`` seconds the RSS of every process
   (``/proc/<pid>/status`` VmRSS), Redis ``INFO memory`` ``used_memory`` and the
   streams open on the services (their Prometheus metrics:
   ``truc_watch_streams``, ``truc_gateway_sse_streams``);
4. a time series table, and per process whether memory is flat: the mean of the
   last quarter of the run against the first quarter after a warm-up (a fifth of
   the run, at most 2 min), over the longest stretch the process ran without a
   restart; flat when it grew by at most 10 % (or 8 MB);
5. settle, then the invariant checks of :mod:`truc_chaos.checks` on Redis.

Exit status 0 when the load ran, memory is flat and no invariant is violated.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import redis

from .checks import CheckInput, Violation, check_all
from .faults import FaultInjector
from .players import PlayerSettings
from .processes import Topology, TopologyConfig
from .records import Journal
from .run import PlayerPool, read_state, wait_quiet

__all__ = ["SOAK_CYCLE", "Sample", "flatness", "main", "steady_rate"]

SOAK_CYCLE: Final = (
    "game-kill",
    "redis-cut",
    "lobby-kill",
    "game-pause",
    "redis-slow",
    "redis-kill",
    "lobby-kill-in-round",
    "game-pause-long",
)
_TARGET: Final = 5
_MANCHES: Final = 1
FINISHED_GAME_TTL_SECONDS: Final = 60
"""Finished games are kept this long, so Redis holds what is being played, not
the soak's whole history (the checks know a finished game may be gone)."""
_ACTION_METRICS: Final = re.compile(
    r'^truc_actions_total\{[^}]*origin="(?:player|session)"[^}]*\}\s+([0-9.eE+-]+)$',
    re.MULTILINE,
)
_STREAM_METRICS: Final = re.compile(
    r"^(truc_watch_streams|truc_sessions|truc_gateway_sse_streams)\b[^ ]*\s+([0-9.eE+-]+)$",
    re.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class Sample:
    at: float
    """Seconds since the soak started."""
    rss_kb: dict[str, int]
    pids: dict[str, int]
    redis_used: int
    streams: dict[str, float]
    actions: dict[str, float] = field(default_factory=dict)
    """Game replica -> its ``truc_actions_total`` of players' actions (reset by a restart)."""
    fault: str = ""


@dataclass(slots=True)
class Flat:
    name: str
    first_mb: float
    last_mb: float
    flat: bool | None
    """None: not enough of a stretch without a restart to say."""
    note: str = ""


@dataclass(slots=True)
class Calibration:
    capacity: float = 0.0
    first_think: float = 0.0
    first_rate: float = 0.0
    think: float = 0.0
    players: int = 0
    rates: list[tuple[float, float]] = field(default_factory=list)
    """(think time, actions per second) of each calibration run."""
    reports: list[dict[str, Any]] = field(default_factory=list)


# --------------------------------------------------------------------------- sampling


def rss_kb(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _metrics_text(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as reply:
            return str(reply.read().decode(errors="replace"))
    except OSError:
        return None


def _player_actions(topology: Topology) -> float:
    """Actions the players had applied so far, over every game replica (their metrics)."""
    total = 0.0
    for game in topology.games:
        text = _metrics_text(game.metrics_url) if game.metrics_url else None
        total += sum(float(v) for v in _ACTION_METRICS.findall(text or ""))
    return total


def _sample(topology: Topology, extra: dict[str, int], started: float, fault: str) -> Sample:
    pids = {**topology.pids(), **extra}
    rss = {name: kb for name, pid in pids.items() if (kb := rss_kb(pid)) is not None}
    used = 0
    try:
        client = redis.Redis.from_url(topology.redis.url, socket_timeout=2)
        try:
            info = client.info("memory")
            used = int(info.get("used_memory", 0))  # type: ignore[union-attr]
        finally:
            client.close()
    except redis.RedisError:
        used = -1
    streams: dict[str, float] = {}
    actions: dict[str, float] = {}
    for service in topology.services:
        text = _metrics_text(service.metrics_url) if service.metrics_url else None
        if text is None:
            streams[service.name] = math.nan
            continue
        streams[service.name] = sum(float(v) for _, v in _STREAM_METRICS.findall(text))
        if service.module == "truc_game":
            actions[service.name] = sum(float(v) for v in _ACTION_METRICS.findall(text))
    return Sample(time.monotonic() - started, rss, pids, used, streams, actions, fault)


def steady_rate(samples: Sequence[Sample]) -> float:
    """Players' actions per second over the samples (a counter that went down was reset
    by a restart: its new value counts whole)."""
    if len(samples) < 2:
        return 0.0
    total = 0.0
    for before, after in itertools.pairwise(samples):
        for name, value in after.actions.items():
            previous = before.actions.get(name)
            if previous is None or value < previous:
                total += value
            else:
                total += value - previous
    span = samples[-1].at - samples[0].at
    return total / span if span > 0 else 0.0


def flatness(samples: Sequence[Sample], name: str, *, redis_memory: bool = False) -> Flat:
    """Whether ``name``'s memory (RSS, or Redis ``used_memory``) stayed flat."""
    if redis_memory:
        series = [(s.at, s.redis_used / 1e6, 0) for s in samples if s.redis_used >= 0]
    else:
        series = [
            (s.at, s.rss_kb[name] / 1024, s.pids.get(name, 0)) for s in samples if name in s.rss_kb
        ]
    if len(series) < 8:
        return Flat(name, 0.0, 0.0, None, "too few samples")
    # The longest stretch without a restart (one pid).
    stretches: list[list[tuple[float, float, int]]] = []
    for point in series:
        if stretches and stretches[-1][-1][2] == point[2]:
            stretches[-1].append(point)
        else:
            stretches.append([point])
    longest = max(stretches, key=lambda run: run[-1][0] - run[0][0])
    span = series[-1][0] - series[0][0]
    note = "" if len(stretches) == 1 else f"{len(stretches) - 1} restart(s): longest stretch"
    if len(longest) < 8 or (longest[-1][0] - longest[0][0]) < 0.4 * span:
        return Flat(name, 0.0, 0.0, None, f"{len(stretches) - 1} restart(s): no long stretch")
    length = longest[-1][0] - longest[0][0]
    warm = min(120.0, length / 5)
    start = longest[0][0] + warm
    body = [p for p in longest if p[0] >= start]
    quarter = max(2, len(body) // 4)
    first = sum(p[1] for p in body[:quarter]) / quarter
    last = sum(p[1] for p in body[-quarter:]) / quarter
    allowance = max(0.10 * first, 8.0)
    return Flat(name, first, last, last - first <= allowance, note)


# --------------------------------------------------------------------------- load


def _load_command(
    topology: Topology, players: int, seconds: float, think: float, report: Path
) -> list[str]:
    return [
        sys.executable,
        "-m",
        "truc_client.load",
        "--lobby",
        topology.lobby_target,
        "--game",
        topology.game_target,
        "--players",
        str(players),
        "--duration",
        f"{seconds:g}",
        "--think",
        f"{think:g}",
        "--target-score",
        str(_TARGET),
        "--manches",
        str(_MANCHES),
        "--quiet",
        "--report",
        str(report),
    ]


async def _load(
    topology: Topology,
    players: int,
    seconds: float,
    think: float,
    *,
    report: Path,
    log: Path,
    pids: dict[str, int] | None = None,
) -> dict[str, Any]:
    """Run ``truc load`` to its end (its own session); its JSON report and exit status.
    ``pids`` gets its process id under ``load``."""
    with log.open("ab") as out:
        process = subprocess.Popen(
            _load_command(topology, players, seconds, think, report),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        if pids is not None:
            pids["load"] = process.pid
        try:
            while process.poll() is None:
                await asyncio.sleep(0.5)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(5)
    data: dict[str, Any] = json.loads(report.read_text()) if report.exists() else {}
    data["exit_status"] = process.returncode
    return data


async def _steady_rate(
    topology: Topology, players: int, seconds: float, think: float, *, report: Path, log: Path
) -> tuple[float, dict[str, Any]]:
    """A ``truc load`` run's actions per second once its tables are seated (read from
    the game replicas' metrics between a third of the run and its last second), and
    its report. The report's own rate counts the start, which weighs in a short run."""
    run = asyncio.create_task(_load(topology, players, seconds, think, report=report, log=log))
    ramp = seconds / 3
    await asyncio.sleep(ramp)
    first, start = await asyncio.to_thread(_player_actions, topology), time.monotonic()
    await asyncio.sleep(max(1.0, seconds - ramp - 1.0))
    last, end = await asyncio.to_thread(_player_actions, topology), time.monotonic()
    data = await run
    rate = (last - first) / (end - start) if end > start else 0.0
    return rate, data


async def _calibrate(
    topology: Topology, players: int, seconds: float, work: Path, *, rounds: int = 3
) -> Calibration:
    """The capacity, then a think time for half of it: corrected after each short run
    (at most ``rounds``) until the rate is within 10 % of the target."""
    found = Calibration(players=players)
    log = work / "load.log"
    found.capacity, full = await _steady_rate(
        topology, players, seconds, 0.0, report=work / "capacity.json", log=log
    )
    found.reports.append(full)
    if found.capacity <= 0:
        raise RuntimeError(f"the capacity run applied no action: {full}")
    tables = players / 6
    target = found.capacity / 2
    # Saturated, an action of a table takes tables / capacity seconds; at half the rate
    # it must take twice that: think about as long as the saturated latency.
    think = tables / found.capacity
    found.first_think = think
    for attempt in range(rounds):
        rate, run = await _steady_rate(
            topology, players, seconds, think, report=work / f"calibrate{attempt}.json", log=log
        )
        found.reports.append(run)
        if attempt == 0:
            found.first_rate = rate
        if rate <= 0:
            break
        found.rates.append((think, rate))
        think = max(0.0, think + tables * (1 / target - 1 / rate))
        if abs(rate - target) <= 0.1 * target:
            think = found.rates[-1][0]
            break
    found.think = think
    return found


# --------------------------------------------------------------------------- the soak


@dataclass(slots=True)
class SoakResult:
    minutes: float
    calibration: Calibration
    samples: list[Sample]
    flats: list[Flat]
    load: dict[str, Any]
    violations: list[Violation]
    health: dict[str, str]
    faults: list[tuple[float, str, str]]
    harness: list[str]
    work_dir: str
    steady_rate: float = 0.0
    """Players' actions per second over the soak, from the replicas' metrics."""

    @property
    def ok(self) -> bool:
        return (
            not self.violations
            and not self.harness
            and all(f.flat is not False for f in self.flats)
            and bool(self.load.get("games", {}).get("completed", 0))
        )


async def soak(
    minutes: float,
    *,
    players: int,
    calibrate_seconds: float,
    sample_seconds: float,
    fault_every: float,
    appendfsync: str,
    work: Path,
) -> SoakResult:
    topology = Topology(
        TopologyConfig(
            work_dir=work,
            appendfsync=appendfsync,
            finished_game_ttl_seconds=FINISHED_GAME_TTL_SECONDS,
        )
    )
    journal = Journal()
    samples: list[Sample] = []
    harness: list[str] = []
    try:
        await topology.start()
        print("soak: measuring capacity", flush=True)
        calibration = await _calibrate(topology, players, calibrate_seconds, work)
        tried = ", ".join(f"think {t:.3f} s: {r:.1f}/s" for t, r in calibration.rates)
        print(
            f"soak: capacity {calibration.capacity:.1f} actions/s with {players} players "
            f"(target {calibration.capacity / 2:.1f}; {tried}); "
            f"soaking at think {calibration.think:.3f} s for {minutes:g} min",
            flush=True,
        )
        settings = PlayerSettings(options=_options(), think=0.1, drop_rate=0.0, seat_timeout=60.0)
        pool = PlayerPool(topology, journal, settings, seed=7)
        injector = FaultInjector(topology, journal, pool.spawn)
        seconds = minutes * 60
        started = time.monotonic()
        wall = time.time()
        load_pid: dict[str, int] = {}
        load_task = asyncio.create_task(
            _load(
                topology,
                players,
                seconds,
                calibration.think,
                report=work / "soak.json",
                log=work / "load.log",
                pids=load_pid,
            )
        )
        faults: list[tuple[float, str, str]] = []
        current = ""

        stop_faults = asyncio.Event()

        async def inject_faults() -> None:
            nonlocal current
            index = 0
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop_faults.wait(), fault_every)
                if stop_faults.is_set():
                    return
                kind = SOAK_CYCLE[index % len(SOAK_CYCLE)]
                index += 1
                current = kind
                record = await injector.inject(kind)
                current = ""
                faults.append((record.started - wall, kind, record.detail))

        fault_task = asyncio.create_task(inject_faults())
        try:
            while not load_task.done():
                sample = await asyncio.to_thread(_sample, topology, load_pid, started, current)
                samples.append(sample)
                _print_sample(sample, len(samples) == 1)
                await asyncio.wait({load_task}, timeout=sample_seconds)
        finally:
            stop_faults.set()
            await fault_task  # a fault under way is finished (and undone) first
            await injector.close()
        harness += injector.failures
        load = load_task.result()
        await pool.settle(60.0)
        await wait_quiet(topology, 60.0)
        health = await topology.health()
        store = await read_state(topology)
        checked = CheckInput(
            store, journal, health=health, finished_ttl_seconds=FINISHED_GAME_TTL_SECONDS
        )
        violations, _ = check_all(checked)
    finally:
        await asyncio.to_thread(topology.close)
    names = sorted({name for s in samples for name in s.rss_kb})
    flats = [flatness(samples, name) for name in names if name != "load"]
    flats.append(flatness(samples, "redis used_memory", redis_memory=True))
    return SoakResult(
        minutes,
        calibration,
        samples,
        flats,
        load,
        violations,
        health,
        faults,
        harness,
        str(work),
        steady_rate=steady_rate(samples[1:] if len(samples) > 3 else samples),
    )


def _options() -> Any:
    from truc.v1 import game_pb2  # noqa: PLC0415

    return game_pb2.RuleOptions(target_score=_TARGET, manches_to_win=_MANCHES)


_COLUMNS: Final = ("game0", "game1", "lobby0", "lobby1", "gateway", "redis", "load")


def _print_sample(sample: Sample, header: bool) -> None:
    if header:
        print(_header(), flush=True)
    print(_row(sample), flush=True)


def _header() -> str:
    names = "".join(f"{c:>9}" for c in _COLUMNS)
    return f"{'t s':>6}{names}{'redis MB':>10}{'streams':>9}  fault   (RSS MB)"


def _row(sample: Sample) -> str:
    cells = "".join(
        f"{sample.rss_kb[c] / 1024:>9.1f}" if c in sample.rss_kb else f"{'-':>9}" for c in _COLUMNS
    )
    streams = sum(v for v in sample.streams.values() if not math.isnan(v))
    used = f"{sample.redis_used / 1e6:>10.2f}" if sample.redis_used >= 0 else f"{'down':>10}"
    return f"{sample.at:>6.0f}{cells}{used}{streams:>9.0f}  {sample.fault}"


def summary(result: SoakResult) -> str:
    load = result.load
    lines = ["", "soak time series (RSS MB per process, Redis used_memory, open streams):"]
    lines.append(_header())
    lines += [_row(s) for s in result.samples]
    lines += ["", "memory:"]
    for flat in result.flats:
        verdict = {True: "flat", False: "GROWING", None: "n/a"}[flat.flat]
        lines.append(
            f"  {flat.name:<20} {flat.first_mb:8.1f} -> {flat.last_mb:8.1f} MB  {verdict}"
            + (f"  ({flat.note})" if flat.note else "")
        )
    c = result.calibration
    lines += [
        "",
        f"capacity {c.capacity:.1f} actions/s ({c.players} players, no think); "
        f"soak at think {c.think:.3f} s: {result.steady_rate:.1f} actions/s steady, "
        f"{load.get('actions', {}).get('per_second', 0)} on average (target {c.capacity / 2:.1f})",
        f"load: games completed {load.get('games', {}).get('completed', 0)}, "
        f"abandoned {load.get('games', {}).get('abandoned', 0)}, "
        f"errors {load.get('errors', {}).get('total', 0)} "
        f"(fatal {load.get('errors', {}).get('fatal', 0)}), exit {load.get('exit_status')}",
        f"faults: {len(result.faults)} ("
        + ", ".join(f"{k} at {t:.0f} s" for t, k, _ in result.faults)
        + ")",
        f"health at the end: {result.health}",
        f"violations: {len(result.violations)}",
    ]
    lines += [f"  {v.line()}" for v in result.violations[:40]]
    if result.harness:
        lines += ["harness problems:", *(f"  {h}" for h in result.harness)]
    kept = f" (logs in {result.work_dir})" if result.work_dir else ""
    lines.append(f"soak: {'PASS' if result.ok else 'FAIL'}{kept}")
    return "\n".join(lines)


def _report(result: SoakResult) -> dict[str, Any]:
    return {
        "schema": "truc-soak/1",
        "ok": result.ok,
        "minutes": result.minutes,
        "calibration": {
            "players": result.calibration.players,
            "capacity_actions_per_s": result.calibration.capacity,
            "first_think_s": result.calibration.first_think,
            "first_rate": result.calibration.first_rate,
            "runs": [{"think_s": t, "actions_per_s": r} for t, r in result.calibration.rates],
            "think_s": result.calibration.think,
        },
        "load": result.load,
        "steady_actions_per_s": result.steady_rate,
        "samples": [
            {
                "t_s": round(s.at, 1),
                "rss_kb": s.rss_kb,
                "redis_used_memory": s.redis_used,
                "streams": s.streams,
                "player_actions": s.actions,
                "fault": s.fault,
            }
            for s in result.samples
        ],
        "memory": [
            {
                "name": f.name,
                "first_mb": f.first_mb,
                "last_mb": f.last_mb,
                "flat": f.flat,
                "note": f.note,
            }
            for f in result.flats
        ],
        "faults": [{"t_s": round(t, 1), "kind": k, "detail": d} for t, k, d in result.faults],
        "violations": [
            {"check": v.check, "subject": v.subject, "detail": v.detail, "component": v.component}
            for v in result.violations
        ],
        "health": result.health,
        "harness": result.harness,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m truc_chaos soak",
        description="truc load at half capacity with a fault every minute; is memory flat?",
    )
    parser.add_argument("--minutes", type=float, default=30.0, help="fractions work (0.5)")
    parser.add_argument("--players", type=int, default=24, help="load players (a multiple of 6)")
    parser.add_argument("--calibrate", type=float, default=15.0, metavar="SECONDS")
    parser.add_argument("--sample", type=float, default=10.0, metavar="SECONDS")
    parser.add_argument("--fault-every", type=float, default=60.0, metavar="SECONDS")
    parser.add_argument("--appendfsync", choices=("always", "everysec"), default="everysec")
    parser.add_argument("--report", type=Path, metavar="PATH")
    parser.add_argument("--keep", action="store_true", help="keep logs and Redis data")
    args = parser.parse_args(argv)
    if not args.minutes > 0:
        parser.error("--minutes must be positive")
    work = Path(tempfile.mkdtemp(prefix="truc-soak-"))
    result = asyncio.run(
        soak(
            args.minutes,
            players=args.players,
            calibrate_seconds=args.calibrate,
            sample_seconds=args.sample,
            fault_every=args.fault_every,
            appendfsync=args.appendfsync,
            work=work,
        )
    )
    if result.ok and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
        result.work_dir = ""
    print(summary(result))
    if args.report is not None:
        args.report.write_text(json.dumps(_report(result), indent=2) + "\n", encoding="utf-8")
    return 0 if result.ok else 1
