"""The topology under test, as real processes on free ports.

* Redis: the bundled Valkey (:class:`truc_dev_redis.RedisServer`) with
  ``appendonly yes`` and the run's ``appendfsync``, in a data directory of the
  run, restarted from its AOF on the same port (:class:`RedisNode`);
* the suite's TCP proxy in front of it (:class:`ProxyProcess`), one for the game
  tier and one for the lobbies (so the game replicas' Redis can be slowed alone):
  every service reaches Redis through one, the checks read Redis directly;
* two game replicas, two lobbies (``TRUC_GAME_ADDRESS`` names both game replicas:
  their gRPC channels balance round robin) and the gateway (both lobbies, both
  game replicas), each a ``python -m <module>`` (:class:`ServiceProcess`).

Every process runs in its own session (a signal meant for the suite is not theirs,
and a whole process group is signalled), logs to a file of the run, and is stopped
by :meth:`Topology.close` whatever happens (SIGCONT first for a paused one, then
SIGTERM, then SIGKILL); an ``atexit`` hook closes a topology left open.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Final

from truc_dev_redis import RedisServer
from truc_service.probe import check as grpc_health

from .aof import AofSampler, Truncation, incremental_file, truncate_to

__all__ = [
    "ProxyProcess",
    "RedisNode",
    "ServiceProcess",
    "Topology",
    "TopologyConfig",
]

_LISTENING: Final = re.compile(r"listening on [^:\s]+:(\d+)")
_METRICS: Final = re.compile(r"metrics on (http://[^ \"]+/metrics)")
_START_TIMEOUT: Final = 30.0
_OPEN: set[Topology] = set()


def _close_open() -> None:
    for topology in list(_OPEN):
        with contextlib.suppress(Exception):
            topology.close()


atexit.register(_close_open)


@dataclass(frozen=True, slots=True)
class TopologyConfig:
    """How the services are configured for a run (short deadlines: matches move)."""

    work_dir: Path
    appendfsync: str = "always"
    game_replicas: int = 2
    lobby_replicas: int = 2
    turn_seconds: int = 3
    deadline_poll_ms: int = 200
    bot_wait_seconds: float = 3.0
    ticket_grace_seconds: float = 20.0
    match_interval_ms: int = 200
    finished_game_ttl_seconds: int | None = None
    history_seconds: int | None = None
    extra_env: dict[str, str] = field(default_factory=dict)


class ServiceProcess:
    """One ``python -m <module>`` service, restartable on the port it first got."""

    def __init__(
        self, name: str, module: str, port_variable: str, env: dict[str, str], log_path: Path
    ) -> None:
        self.name = name
        self.module = module
        self.port_variable = port_variable
        self.env = env
        self.log_path = log_path
        self.port = 0
        self.metrics_url: str | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.paused = False
        self.starts = 0
        self._log: IO[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def _launch(self) -> int:
        """Start the process; the log offset its output starts at."""
        if self._log is None:
            self._log = self.log_path.open("ab")
        self._log.flush()
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        self._log.write(f"--- chaos: starting {self.name} at {time.time():.3f}\n".encode())
        self._log.flush()
        self.process = subprocess.Popen(
            [sys.executable, "-m", self.module],
            env={**self.env, self.port_variable: str(self.port)},
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.paused = False
        self.starts += 1
        return offset

    async def start(self) -> None:
        """Start (again, on the same port once it has one) and wait until healthy."""
        offset = self._launch()
        deadline = time.monotonic() + _START_TIMEOUT
        while True:
            text = self._log_since(offset)
            found = _LISTENING.search(text)
            if found:
                self.port = int(found.group(1))
                metrics = _METRICS.search(text)
                self.metrics_url = metrics.group(1) if metrics else None
                break
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited while starting:\n{text[-3000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} did not start:\n{text[-3000:]}")
            await asyncio.sleep(0.05)
        while await self.health() != "SERVING":
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} never became SERVING:\n{self.log_tail()}")
            await asyncio.sleep(0.1)

    async def health(self) -> str:
        """``SERVING`` when healthy, else the status or the failure's name."""
        if self.module == "truc_gateway":
            return await asyncio.to_thread(_http_health, f"http://{self.address}/healthz")
        return await asyncio.to_thread(grpc_health, self.address, timeout=2.0)

    def log_size(self) -> int:
        return self.log_path.stat().st_size if self.log_path.exists() else 0

    def log_since(self, offset: int) -> str:
        return self._log_since(offset)

    def _log_since(self, offset: int) -> str:
        with self.log_path.open("rb") as log:
            log.seek(offset)
            return log.read().decode(errors="replace")

    def log_tail(self, size: int = 4000) -> str:
        with self.log_path.open("rb") as log:
            log.seek(max(0, log.seek(0, os.SEEK_END) - size))
            return log.read().decode(errors="replace")

    def signal(self, sig: signal.Signals) -> None:
        if self.running and self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)

    def kill(self) -> None:
        """SIGKILL, as a crash: the process dies at once."""
        self.signal(signal.SIGKILL)
        if self.process is not None:
            self.process.wait(10)
        self.paused = False

    def pause(self) -> None:
        self.signal(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        self.signal(signal.SIGCONT)
        self.paused = False

    def stop(self, timeout: float = 8.0, *, signalled: bool = False) -> int | None:
        """SIGCONT and SIGTERM (unless ``signalled``: a second SIGTERM would skip the
        drain), then SIGKILL after ``timeout``; the exit status."""
        if self.process is None:
            return None
        if self.running:
            if not signalled:
                self.signal(signal.SIGCONT)
                self.signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.signal(signal.SIGKILL)
                self.process.wait(5)
        if self._log is not None:
            self._log.close()
            self._log = None
        return self.process.returncode


def _http_health(url: str) -> str:
    import json  # noqa: PLC0415 - only here

    try:
        with urllib.request.urlopen(url, timeout=2) as reply:
            return str(json.load(reply).get("status", "UNKNOWN"))
    except urllib.error.HTTPError as error:
        try:
            return str(json.load(error).get("status", f"HTTP {error.code}"))
        except ValueError:
            return f"HTTP {error.code}"
    except (OSError, ValueError) as error:
        return type(error).__name__


class ProxyProcess:
    """``python -m truc_chaos.proxy`` in front of Redis; commands over its stdin."""

    def __init__(self, target_port: int, log_path: Path) -> None:
        self.target_port = target_port
        self.log_path = log_path
        self.port = 0
        self.process: subprocess.Popen[str] | None = None
        self.latency_ms = 0.0

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def start(self) -> None:
        with self.log_path.open("ab") as log:  # the child keeps its own copy
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "truc_chaos.proxy",
                    "--target",
                    f"127.0.0.1:{self.target_port}",
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                bufsize=1,
                start_new_session=True,
            )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        found = _LISTENING.search(line)
        if not found:
            raise RuntimeError(f"the proxy did not start: {line!r}")
        self.port = int(found.group(1))

    def command(self, line: str) -> str:
        """Send one command; its ``ok ...`` answer."""
        process = self.process
        if process is None or process.stdin is None or process.stdout is None:
            raise RuntimeError("the proxy is not running")
        process.stdin.write(line + "\n")
        process.stdin.flush()
        return process.stdout.readline().strip()

    async def latency(self, ms: float) -> str:
        self.latency_ms = ms
        return await asyncio.to_thread(self.command, f"latency {ms:g}")

    async def cut(self, refuse_seconds: float) -> str:
        return await asyncio.to_thread(self.command, f"cut {refuse_seconds:g}")

    async def passthrough(self) -> str:
        self.latency_ms = 0.0
        return await asyncio.to_thread(self.command, "pass")

    def stop(self) -> None:
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            with contextlib.suppress(OSError):
                assert process.stdin is not None
                process.stdin.close()
            try:
                process.wait(3)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(3)
        if process.stdout is not None:
            process.stdout.close()


class RedisNode:
    """The bundled Valkey on a fixed port and data directory, killable and restartable
    from its AOF, with the AOF's size sampled for simulated machine crashes."""

    def __init__(self, directory: Path, appendfsync: str) -> None:
        self.directory = directory
        self.appendfsync = appendfsync
        self.port = 0
        self.server: RedisServer | None = None
        self.sampler = AofSampler(directory)
        self.restarts = 0

    @property
    def url(self) -> str:
        return self.via(self.port)

    def via(self, port: int) -> str:
        """The URL of this Redis through ``port`` (a proxy in front of it), password included."""
        assert self.server is not None, "not started yet"
        return self.server.url_with(port=port)

    @property
    def pid(self) -> int | None:
        return None if self.server is None or not self.server.running else self.server.pid

    def _new_server(self) -> RedisServer:
        return RedisServer(
            port=self.port,
            data_dir=self.directory,
            appendonly=True,
            appendfsync=self.appendfsync,
            startup_timeout=30.0,
            # Drawn at the first start, kept by restarts: the services keep their REDIS_URL.
            password=None if self.server is None else self.server.password,
            options=(
                "--aof-load-truncated",
                "yes",
                "--auto-aof-rewrite-percentage",
                "0",
                "--save",
                "",
            ),
        )

    def start(self) -> None:
        server = self._new_server()
        server.start()
        self.server = server
        self.port = server.port
        if self.sampler._thread is None:
            self.sampler.start()

    def kill(self) -> float:
        """SIGKILL the server; when it died."""
        if self.server is not None:
            self.server.kill()
        return time.time()

    def crash(self, lose_seconds: float) -> Truncation:
        """SIGKILL, then cut the AOF back to its size ``lose_seconds`` before the kill
        (what the disk holds after a machine crash with ``appendfsync everysec``)."""
        path = incremental_file(self.directory)
        killed = self.kill()
        if path is None:
            return Truncation(killed, killed, "", 0, 0)
        sample = self.sampler.before(killed - lose_seconds, path.name)
        size = 0 if sample is None else sample.size
        before = truncate_to(path, size)
        return Truncation(
            killed,
            killed - lose_seconds if sample is None else sample.at,
            path.name,
            before,
            min(size, before),
        )

    def restart(self) -> None:
        self.restarts += 1
        self.start()

    def stop(self) -> None:
        self.sampler.stop()
        if self.server is not None:
            self.server.stop()


def _round_robin(addresses: list[str]) -> str:
    """A gRPC target naming every address (the channel balances round robin)."""
    return "ipv4:" + ",".join(addresses)


class Topology:
    """Redis behind the proxy, the game replicas, the lobbies and the gateway."""

    def __init__(self, config: TopologyConfig) -> None:
        self.config = config
        self.logs = config.work_dir / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.redis = RedisNode(config.work_dir / "redis", config.appendfsync)
        self.proxies: dict[str, ProxyProcess] = {}
        """``game`` (the game replicas' way to Redis) and ``lobby`` (the lobbies')."""
        self.games: list[ServiceProcess] = []
        self.lobbies: list[ServiceProcess] = []
        self.gateway: ServiceProcess | None = None
        self._closed = False

    # ------------------------------------------------------------ addresses

    @property
    def game_ttls(self) -> tuple[int, int]:
        """The game service's (unfinished, finished) game TTLs in seconds."""
        week = 7 * 24 * 3600
        finished = self.config.finished_game_ttl_seconds
        return week, week if finished is None else finished

    @property
    def game_target(self) -> str:
        return _round_robin([g.address for g in self.games])

    @property
    def lobby_target(self) -> str:
        return _round_robin([lobby.address for lobby in self.lobbies])

    @property
    def gateway_url(self) -> str:
        assert self.gateway is not None
        return f"http://{self.gateway.address}"

    @property
    def services(self) -> list[ServiceProcess]:
        return [*self.games, *self.lobbies, *([self.gateway] if self.gateway else [])]

    def pids(self) -> dict[str, int]:
        found = {s.name: s.pid for s in self.services if s.running and s.pid is not None}
        if self.redis.pid is not None:
            found["redis"] = self.redis.pid
        for tier, proxy in self.proxies.items():
            if proxy.pid is not None:
                found[f"proxy-{tier}"] = proxy.pid
        return {name: pid for name, pid in found.items() if pid is not None}

    # ------------------------------------------------------------ lifecycle

    def _env(self, tier: str) -> dict[str, str]:
        c = self.config
        env = {
            **os.environ,
            "REDIS_URL": self.redis.via(self.proxies[tier].port),
            "TRUC_DEV_MODE": "1",
            "TRUC_LOG_FORMAT": "text",
            "TRUC_LOG_LEVEL": "INFO",
            "TRUC_METRICS_PORT": "-1",
            "TRUC_GRACE_SECONDS": "1",
            "TRUC_TURN_SECONDS": str(c.turn_seconds),
            "TRUC_GAME_TURN_SECONDS": str(c.turn_seconds),
            "TRUC_DEADLINE_POLL_MS": str(c.deadline_poll_ms),
            "TRUC_BOT_WAIT_SECONDS": str(c.bot_wait_seconds),
            "TRUC_TICKET_GRACE_SECONDS": str(c.ticket_grace_seconds),
            "TRUC_MATCH_INTERVAL_MS": str(c.match_interval_ms),
            "TRUC_GATEWAY_CALL_TIMEOUT_MS": "5000",
            "TRUC_GATEWAY_HEARTBEAT_MS": "2000",
            "TRUC_GATEWAY_GRACE_SECONDS": "1",
        }
        env.pop("TRUC_JWT_SECRET", None)
        if c.finished_game_ttl_seconds is not None:
            env["TRUC_FINISHED_GAME_TTL_SECONDS"] = str(c.finished_game_ttl_seconds)
        if c.history_seconds is not None:
            env["TRUC_HISTORY_SECONDS"] = str(c.history_seconds)
        env.update(c.extra_env)
        return env

    async def start(self) -> None:
        _OPEN.add(self)
        await asyncio.to_thread(self.redis.start)
        for tier in ("game", "lobby"):
            proxy = self.proxies[tier] = ProxyProcess(
                self.redis.port, self.logs / f"proxy-{tier}.log"
            )
            await asyncio.to_thread(proxy.start)
        env = self._env("game")
        self.games = [
            ServiceProcess(
                f"game{i}", "truc_game", "TRUC_GAME_PORT", env, self.logs / f"game{i}.log"
            )
            for i in range(self.config.game_replicas)
        ]
        await asyncio.gather(*(g.start() for g in self.games))
        lobby_env = {**self._env("lobby"), "TRUC_GAME_ADDRESS": self.game_target}
        self.lobbies = [
            ServiceProcess(
                f"lobby{i}", "truc_lobby", "TRUC_LOBBY_PORT", lobby_env, self.logs / f"lobby{i}.log"
            )
            for i in range(self.config.lobby_replicas)
        ]
        await asyncio.gather(*(lobby.start() for lobby in self.lobbies))
        gateway_env = {
            **env,
            "TRUC_GAME_ADDRESS": self.game_target,
            "TRUC_LOBBY_ADDRESS": self.lobby_target,
        }
        self.gateway = ServiceProcess(
            "gateway", "truc_gateway", "TRUC_GATEWAY_PORT", gateway_env, self.logs / "gateway.log"
        )
        await self.gateway.start()

    async def health(self) -> dict[str, str]:
        """Every service's health (gRPC ``""`` or the gateway's ``/healthz``), and Redis."""
        names = [s.name for s in self.services]
        statuses = await asyncio.gather(*(s.health() for s in self.services))
        found = dict(zip(names, statuses, strict=True))
        found["redis"] = "SERVING" if await asyncio.to_thread(self._redis_pings) else "DOWN"
        for tier, proxy in self.proxies.items():
            running = proxy.process is not None and proxy.process.poll() is None
            found[f"proxy-{tier}"] = "SERVING" if running else "EXITED"
        return found

    def _redis_pings(self) -> bool:
        import redis  # noqa: PLC0415 - only here

        try:
            client = redis.Redis.from_url(self.redis.url, socket_timeout=2)
            try:
                return bool(client.ping())
            finally:
                client.close()
        except redis.RedisError:
            return False

    def close(self) -> dict[str, int | None]:
        """Stop everything (whatever state it is in); each service's exit status."""
        if self._closed:
            return {}
        self._closed = True
        codes: dict[str, int | None] = {}
        for service in self.services:
            service.signal(signal.SIGCONT)
        for service in self.services:
            if service.running:
                service.signal(signal.SIGTERM)
        for service in self.services:
            codes[service.name] = service.stop(signalled=True)
        for proxy in self.proxies.values():
            proxy.stop()
        self.redis.stop()
        _OPEN.discard(self)
        return codes
