"""One chaos run: the topology, the players, the faults, the settle phase, the checks.

:func:`chaos_run` does, for one ``appendfsync`` mode:

1. starts Redis (AOF on, that mode) behind the proxy, two game replicas, two
   lobbies and the gateway (:class:`~truc_chaos.processes.Topology`);
2. starts the players: ``grpc_players`` over gRPC and ``rest_players`` over
   REST/SSE (:class:`PlayerPool`), short matches, short deadlines;
3. injects the faults of the schedule for ``fault_seconds``
   (:class:`~truc_chaos.faults.FaultInjector`);
4. settles: no more faults, every player finishes its match (and queues once more
   so the lobby records it, then cancels), bounded by ``settle_seconds``; then waits
   (bounded too) for tickets still MATCHING and results still pending;
5. checks: every process's health, ``ListGames`` of every player, Redis read
   directly (:mod:`truc_chaos.checks`), and returns a :class:`RunResult`.

Every process is stopped at the end, whatever happened.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from truc.v1 import game_pb2

from .checks import CheckInput, Excused, Violation, check_all
from .faults import FULL_CYCLE, FaultInjector, Step, short_schedule
from .grpc_players import GrpcTransport
from .players import CallError, Player, PlayerSettings
from .processes import Topology, TopologyConfig
from .records import Journal
from .rest_players import RestTransport
from .store_state import StoreState, read_store

__all__ = ["PlayerPool", "RunConfig", "RunResult", "chaos_run", "read_state", "wait_quiet"]


@dataclass(frozen=True, slots=True)
class RunConfig:
    appendfsync: str = "always"
    fault_seconds: float = 180.0
    settle_seconds: float = 60.0
    grpc_players: int = 12
    rest_players: int = 6
    seed: int = 1
    short: bool = False
    """The short schedule (``make test``: each of its faults once, however long that
    takes; ``fault_seconds`` is then unused) rather than the full cycle."""
    target_score: int = 5
    manches: int = 1
    think: float = 0.1
    drop_rate: float = 0.01
    work_dir: Path | None = None
    keep: bool = False
    """Keep the run's directory (logs, Redis data) even when it passes."""
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment variables of every service."""


@dataclass(slots=True)
class RunResult:
    config: RunConfig
    journal: Journal
    store: StoreState
    violations: list[Violation]
    excused: list[Excused]
    health: dict[str, str]
    timings: dict[str, float]
    exit_codes: dict[str, int | None] = field(default_factory=dict)
    work_dir: str = ""
    harness: list[str] = field(default_factory=list)
    """What went wrong in the suite itself (a fault it could not undo...)."""

    @property
    def ok(self) -> bool:
        return not self.violations and not self.harness


class PlayerPool:
    """The run's players, and the extra ones the faults spawn."""

    def __init__(
        self, topology: Topology, journal: Journal, settings: PlayerSettings, seed: int
    ) -> None:
        self.topology = topology
        self.journal = journal
        self.settings = settings
        self.seed = seed
        self.stopping = asyncio.Event()
        self.players: list[Player] = []
        self.tasks: list[asyncio.Task[None]] = []
        self._extras = 0

    def _add(self, player: Player) -> None:
        self.players.append(player)
        self.tasks.append(asyncio.create_task(player.run(self.stopping), name=player.name))

    def start(self, grpc_players: int, rest_players: int) -> None:
        for i in range(grpc_players):
            transport = GrpcTransport(self.topology.lobby_target, self.topology.game_target)
            self._add(Player(i, transport, self.journal, self.settings, seed=self.seed * 1000 + i))
        for i in range(rest_players):
            rest = RestTransport(self.topology.gateway_url)
            index = grpc_players + i
            self._add(
                Player(index, rest, self.journal, self.settings, seed=self.seed * 1000 + index)
            )

    async def spawn(self, count: int) -> Sequence[str]:
        """``count`` extra gRPC players for one match each; their names."""
        names = []
        for _ in range(count):
            self._extras += 1
            index = 500 + self._extras
            transport = GrpcTransport(self.topology.lobby_target, self.topology.game_target)
            player = Player(
                index,
                transport,
                self.journal,
                self.settings,
                seed=self.seed * 1000 + index,
                matches=1,
                name=f"extra{self._extras}",
            )
            names.append(player.name)
            self._add(player)
        return names

    async def settle(self, seconds: float) -> int:
        """Ask every player to stop after its match; wait up to ``seconds``; cancel the
        rest. How many had to be cancelled."""
        self.stopping.set()
        done, pending = await asyncio.wait(self.tasks, timeout=seconds) if self.tasks else ((), ())
        for task in pending:
            task.cancel()
        for task in pending:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for task in done:
            if not task.cancelled() and task.exception() is not None:
                error = task.exception()
                self.journal.note("", "player crashed", f"{task.get_name()}: {error!r}")
        return len(pending)


async def _list_games(topology: Topology, journal: Journal) -> dict[str, list[str]]:
    """Each player's ``ListGames`` through the public API (gRPC)."""
    transport = GrpcTransport(topology.lobby_target, topology.game_target)
    listed: dict[str, list[str]] = {}
    try:
        for player, token in journal.players.items():
            for _ in range(5):
                try:
                    listed[player] = await transport.list_games(token)
                    break
                except CallError:
                    await asyncio.sleep(0.5)
    finally:
        await transport.close()
    return listed


async def read_state(topology: Topology) -> StoreState:
    """Redis as the checks see it (read directly, with the game service's TTLs)."""
    unfinished, finished = topology.game_ttls
    return await asyncio.to_thread(
        read_store,
        topology.redis.url,
        game_ttl_seconds=unfinished,
        finished_ttl_seconds=finished,
    )


async def wait_quiet(topology: Topology, seconds: float) -> None:
    """Wait (bounded) until no ticket is MATCHING and no finished game awaits its result."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        store = await read_state(topology)
        matching = [t for t in store.tickets.values() if t.state == "MATCHING"]
        pending = [
            g
            for g in store.games.values()
            if g.finished and g.humans and g.game in store.tracked and g.game not in store.summaries
        ]
        if not matching and not pending:
            return
        await asyncio.sleep(1.0)


async def chaos_run(config: RunConfig) -> RunResult:
    work = config.work_dir or Path(tempfile.mkdtemp(prefix=f"truc-chaos-{config.appendfsync}-"))
    work.mkdir(parents=True, exist_ok=True)
    topology = Topology(
        TopologyConfig(work_dir=work, appendfsync=config.appendfsync, extra_env=dict(config.env))
    )
    journal = Journal()
    timings: dict[str, float] = {}
    harness: list[str] = []
    started = time.monotonic()
    exit_codes: dict[str, int | None] = {}
    try:
        await topology.start()
        timings["start_s"] = time.monotonic() - started
        settings = PlayerSettings(
            options=game_pb2.RuleOptions(
                target_score=config.target_score, manches_to_win=config.manches
            ),
            think=config.think,
            drop_rate=config.drop_rate,
        )
        pool = PlayerPool(topology, journal, settings, config.seed)
        pool.start(config.grpc_players, config.rest_players)
        injector = FaultInjector(topology, journal, pool.spawn)
        steps = (
            short_schedule(config.appendfsync)
            if config.short
            else [Step(kind, gap=4.0) for kind in FULL_CYCLE]
        )
        phase = time.monotonic()
        await asyncio.sleep(2.0)  # the first matches start
        try:
            await injector.run(
                steps, None if config.short else time.time() + config.fault_seconds - 2.0
            )
        finally:
            await injector.close()
        harness += injector.failures
        timings["faults_s"] = time.monotonic() - phase
        phase = time.monotonic()
        cancelled = await pool.settle(config.settle_seconds)
        if cancelled:
            journal.note("", "settle", f"{cancelled} player(s) still playing were cancelled")
        await wait_quiet(topology, max(5.0, config.settle_seconds - (time.monotonic() - phase)))
        timings["settle_s"] = time.monotonic() - phase
        phase = time.monotonic()
        health = await topology.health()
        listed = await _list_games(topology, journal)
        store = await read_state(topology)
        violations, excused = check_all(CheckInput(store, journal, listed=listed, health=health))
        timings["check_s"] = time.monotonic() - phase
        harness += [
            f"{n.kind}: {n.player} {n.detail}"
            for n in journal.notes
            if n.kind in ("player error", "player crashed")
        ]
    finally:
        exit_codes = await asyncio.to_thread(topology.close)
    timings["total_s"] = time.monotonic() - started
    result = RunResult(
        config,
        journal,
        store,
        violations,
        excused,
        health,
        timings,
        exit_codes=exit_codes,
        work_dir=str(work),
        harness=harness,
    )
    if result.ok and not config.keep and config.work_dir is None:
        shutil.rmtree(work, ignore_errors=True)
        result.work_dir = ""
    return result
