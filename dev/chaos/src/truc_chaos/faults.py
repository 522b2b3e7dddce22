"""The faults, injected on a schedule while the players play.

* ``game-kill``: SIGKILL a game replica, restart it on its port 1 s later;
* ``game-pause``: SIGSTOP a game replica for 5 s, then SIGCONT;
* ``game-pause-long``: SIGSTOP the game replicas for 12 s (longer than the lobby's
  CreateGame deadline, 5 s) while a CreateGame's answer is on its way: the game
  tier's Redis proxy is slowed to 600 ms each way, 6 extra players queue, and the
  moment their game appears in Redis (its answer 600 ms away) every replica
  is stopped: the lobby waits past its deadline for a game that exists;
* ``lobby-kill``: SIGKILL a lobby, restart it 1 s later;
* ``lobby-kill-in-round``: SIGSTOP every game replica, let 6 extra players queue,
  wait until their tickets are MATCHING in Redis (a round is inside CreateGame),
  SIGKILL the lobbies, SIGCONT the replicas, restart the lobbies;
* ``redis-kill``: SIGKILL Redis, restart it from its AOF on the same port;
* ``redis-crash``: a machine crash: SIGKILL Redis, cut its AOF back to its size
  ~1 s before, restart it (``aof-load-truncated yes``);
* ``redis-cut``: the proxies abort every Redis connection and refuse new ones for 2 s;
* ``redis-slow``: the proxies delay Redis traffic by 150 ms each way for 4 s.

Client-side faults (a SubmitAction cancelled in flight, connections dropped in the
middle of a watch) are the players' own (:mod:`truc_chaos.players`), all along.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Final

import redis.asyncio as aioredis

from .processes import ServiceProcess, Topology
from .records import FaultRecord, Journal

__all__ = ["FULL_CYCLE", "KINDS", "FaultInjector", "Step", "short_schedule"]

KINDS: Final = (
    "game-kill",
    "game-pause",
    "game-pause-long",
    "lobby-kill",
    "lobby-kill-in-round",
    "redis-kill",
    "redis-crash",
    "redis-cut",
    "redis-slow",
)
FULL_CYCLE: Final = (
    "game-kill",
    "redis-cut",
    "lobby-kill",
    "game-pause",
    "redis-slow",
    "redis-loss",  # redis-kill with always, redis-crash with everysec
    "lobby-kill-in-round",
    "game-pause-long",
)
_MATCHING_WAIT: Final = 10.0


@dataclass(frozen=True, slots=True)
class Step:
    kind: str
    gap: float = 3.0
    """Seconds of calm after the fault before the next one."""


def short_schedule(appendfsync: str) -> list[Step]:
    """The short run's faults (``make test``), each once: between the two modes, every kind."""
    if appendfsync == "always":
        return [
            Step("game-kill"),
            Step("lobby-kill"),
            Step("redis-cut"),
            Step("redis-kill"),
            Step("game-pause"),
            Step("lobby-kill-in-round", gap=1.0),
        ]
    return [
        Step("redis-crash"),
        Step("game-pause-long"),
        Step("lobby-kill"),
        Step("game-kill"),
        Step("redis-slow", gap=1.0),
    ]


Spawn = Callable[[int], Awaitable[Sequence[str]]]
"""Start ``n`` extra one-match players; their names (``Player.name``)."""


class FaultInjector:
    def __init__(
        self, topology: Topology, journal: Journal, spawn: Spawn, *, lose_seconds: float = 1.0
    ) -> None:
        self.topology = topology
        self.journal = journal
        self.spawn = spawn
        self.lose_seconds = lose_seconds
        self.failures: list[str] = []
        self._turn = 0
        self._redis = aioredis.Redis.from_url(topology.redis.url, socket_timeout=2)

    async def close(self) -> None:
        await self._redis.aclose()

    def _next(self, services: Sequence[ServiceProcess]) -> ServiceProcess:
        self._turn += 1
        return services[self._turn % len(services)]

    async def run(self, steps: Sequence[Step], until: float | None) -> None:
        """Inject ``steps`` in order, cycling until ``until`` (``time.time()``), or each
        once when ``until`` is None."""
        index = 0
        while steps and (time.time() < until if until is not None else index < len(steps)):
            step = steps[index % len(steps)]
            index += 1
            await self.inject(step.kind)
            rest = step.gap if until is None else min(step.gap, max(0.0, until - time.time()))
            await asyncio.sleep(rest)

    async def inject(self, kind: str) -> FaultRecord:
        if kind == "redis-loss":
            kind = "redis-kill" if self.topology.redis.appendfsync == "always" else "redis-crash"
        record = self.journal.fault(kind)
        try:
            record.detail = await getattr(self, "_" + kind.replace("-", "_"))()
        except Exception as error:  # a fault that could not be undone: the run says so
            self.failures.append(f"{kind}: {type(error).__name__}: {error}")
            record.detail = f"FAILED: {error}"
        finally:
            await self._heal()
            record.ended = time.time()
        return record

    async def _heal(self) -> None:
        """Whatever a fault left: paused replicas resumed, dead ones restarted."""
        for service in self.topology.services:
            if service.paused:
                service.resume()
        for service in self.topology.services:
            if not service.running:
                await service.start()
        if self.topology.redis.pid is None:
            await asyncio.to_thread(self.topology.redis.restart)
            self.journal.redis_restarts.append(time.time())
        for proxy in self.topology.proxies.values():
            if proxy.latency_ms:
                await proxy.passthrough()

    # ------------------------------------------------------------------ services

    async def _game_kill(self) -> str:
        game = self._next(self.topology.games)
        game.kill()
        await asyncio.sleep(1.0)
        await game.start()
        return f"{game.name} killed, restarted on :{game.port}"

    async def _game_pause(self) -> str:
        game = self._next(self.topology.games)
        game.pause()
        await asyncio.sleep(5.0)
        game.resume()
        return f"{game.name} paused 5 s"

    async def _game_pause_long(self) -> str:
        """Pause the game replicas for 12 s with a CreateGame's answer on its way: the
        game tier's Redis proxy is made slow (600 ms each way), 6 extra players queue,
        and the moment their game appears in Redis (the replica's write arrived, its
        answer is 600 ms away) every replica is stopped: the lobby waits for an
        answer that comes after its deadline (5 s), for a game that exists."""
        proxy = self.topology.proxies["game"]
        games = self.topology.games
        known = await self._game_keys()
        await proxy.latency(600)  # before the players queue: their round is quick
        names = set(await self.spawn(6))
        created = await self._wait_game_for(names, known)
        matching = await self._matching(names)
        for game in games:
            game.pause()
        await proxy.passthrough()
        offsets = {g.name: g.log_size() for g in games}
        await asyncio.sleep(12.0)
        for game in games:
            game.resume()
        await asyncio.sleep(1.5)
        answered = sum(g.log_since(offsets[g.name]).count("game created") for g in games)
        if created is None:
            return "game replicas paused 12 s, but no game for the extra players appeared first"
        return (
            f"game replicas paused 12 s the moment games/{created} was in Redis (its "
            f"CreateGame answer 600 ms away; {len(matching)} ticket(s) MATCHING); "
            f"{answered} CreateGame answer(s) logged once resumed"
        )

    async def _game_keys(self) -> set[bytes]:
        return {k async for k in self._redis.scan_iter(match="truc:{g*}:game:*", count=1000)}

    async def _wait_game_for(
        self, names: set[str], known: set[bytes], timeout: float = 15.0
    ) -> str | None:
        """The id of a new game seating one of the players ``names`` (bounded wait)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            players = {p for p, n in self.journal.names.items() if n in names}
            for key in await self._game_keys() - known:
                if key.count(b":") != 3:
                    continue  # the game's other keys (its log, rate counters)
                meta = await self._redis.hget(key, "m")
                if meta and players & set(json.loads(meta).get("p", [])):
                    return key.decode().rsplit(":", 1)[-1]
                known.add(key)
            await asyncio.sleep(0.02)
        return None

    async def _lobby_kill(self) -> str:
        lobby = self._next(self.topology.lobbies)
        lobby.kill()
        await asyncio.sleep(1.0)
        await lobby.start()
        return f"{lobby.name} killed, restarted on :{lobby.port}"

    async def _lobby_kill_in_round(self) -> str:
        for game in self.topology.games:
            game.pause()
        try:
            names = set(await self.spawn(6))
            matching = await self._wait_matching(names)
            await asyncio.sleep(0.3)  # the round claims every table it formed
            for lobby in self.topology.lobbies:
                lobby.kill()
        finally:
            for game in self.topology.games:
                game.resume()
        await asyncio.sleep(0.5)
        await asyncio.gather(*(lobby.start() for lobby in self.topology.lobbies))
        if not matching:
            return "no ticket reached MATCHING: lobbies killed anyway"
        return f"lobbies killed with {len(matching)} ticket(s) MATCHING: {sorted(matching)}"

    def _tickets_of(self, names: set[str]) -> list[str]:
        players = {p for p, n in self.journal.names.items() if n in names}
        return [t.ticket for t in self.journal.tickets.values() if t.player in players]

    async def _matching(self, names: set[str]) -> set[str]:
        """Tickets of the players ``names`` that are MATCHING in Redis now."""
        found: set[str] = set()
        for ticket in self._tickets_of(names):
            key = "truc:{lobby}:ticket:" + ticket.split("/", 1)[-1]
            with contextlib.suppress(Exception):
                if await self._redis.hget(key, "s") == b"MATCHING":
                    found.add(ticket)
        return found

    async def _wait_matching(self, names: set[str], timeout: float = _MATCHING_WAIT) -> set[str]:
        """Tickets of the players ``names`` that are MATCHING in Redis (bounded wait)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = await self._matching(names)
            if found:
                return found
            await asyncio.sleep(0.05)
        return set()

    # ------------------------------------------------------------------ Redis

    async def _redis_kill(self) -> str:
        node = self.topology.redis
        await asyncio.to_thread(node.kill)
        await asyncio.sleep(0.5)
        await asyncio.to_thread(node.restart)
        self.journal.redis_restarts.append(time.time())
        return f"Redis killed, restarted from its AOF on :{node.port}"

    async def _redis_crash(self) -> str:
        node = self.topology.redis
        cut = await asyncio.to_thread(node.crash, self.lose_seconds)
        await asyncio.sleep(0.5)
        await asyncio.to_thread(node.restart)
        back = time.time()
        self.journal.redis_restarts.append(back)
        cut = dataclasses.replace(cut, back_at=back)
        self.journal.truncations.append(cut)
        return (
            f"Redis killed, AOF {cut.file} cut from {cut.size_before} to {cut.size_after} bytes "
            f"(the last {cut.window_ms:.0f} ms of writes), restarted"
        )

    async def _redis_cut(self) -> str:
        proxies = self.topology.proxies
        answers = await asyncio.gather(*(p.cut(2.0) for p in proxies.values()))
        await asyncio.sleep(2.0)
        await asyncio.gather(*(p.passthrough() for p in proxies.values()))
        cut = ", ".join(
            f"{tier}: {a.removeprefix('ok ')}" for tier, a in zip(proxies, answers, strict=True)
        )
        return f"{cut}; new ones refused for 2 s"

    async def _redis_slow(self) -> str:
        proxies = self.topology.proxies.values()
        await asyncio.gather(*(p.latency(150) for p in proxies))
        await asyncio.sleep(4.0)
        await asyncio.gather(*(p.passthrough() for p in proxies))
        return "150 ms each way for 4 s"
