"""Start the services as processes for `make serve` and `make run`."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO

from truc_dev_redis import RedisServer

_LISTENING = re.compile(r"listening on [^:]+:(\d+)")
_METRICS = re.compile(r"metrics on http://(\S+)/metrics")
DEFAULT_PORTS: dict[str, tuple[int, int]] = {
    "game": (50051, 9464),
    "lobby": (50052, 9465),
    "gateway": (8080, 9466),
}
"""Each service's default port and default metrics port (the services' own defaults)."""
DEV_CORS_ORIGINS = "http://localhost:*,http://127.0.0.1:*,http://[::1]:*"
"""The gateway's CORS origins in a development stack unless TRUC_GATEWAY_CORS_ORIGINS
is set: a front-end's dev server on this machine, on any port (the gateway's own
default allows none)."""
_SERVICE_GRACE = 15.0
"""Seconds each service has to stop after SIGTERM before it gets SIGKILL."""
_REDIS_GRACE = 5.0
"""Likewise for the bundled Redis (RedisServer.stop waits as long)."""
_OUTPUT = threading.Lock()
"""Held while a line is written: the services' relays and the script's own lines."""
_STEP = 0.05
"""The longest single wait of a stop: how soon ``hurry`` is asked again."""


@dataclass(frozen=True, slots=True)
class Addresses:
    redis: str
    game: str
    lobby: str
    gateway: str
    metrics: dict[str, str]
    """Each service's ``/metrics`` address (``host:port``), if it serves one."""


def metrics_port(name: str, port: int, environ: dict[str, str]) -> str:
    """The ``TRUC_METRICS_PORT`` of service ``name`` (``game``, ``lobby``,
    ``gateway``) on ``port``: ``TRUC_METRICS_PORT`` when it is 0 (off) or -1 (a
    free port) for every service; N > 0: N, N + 1 and N + 2, in that order; unset:
    the service's default (9464, 9465, 9466) while it runs on its default port,
    else -1, so that changing a service's port never puts two stacks' metrics on
    one port."""
    given = environ.get("TRUC_METRICS_PORT", "").strip()
    order = list(DEFAULT_PORTS)
    if given:
        if not given.removeprefix("-").isdecimal():
            return given  # the service refuses it, naming the variable
        base = int(given)
        return str(base + order.index(name)) if base > 0 else str(base)
    default_port, default_metrics = DEFAULT_PORTS[name]
    return str(default_metrics) if port == default_port else "-1"


def _relay(
    name: str,
    stream: IO[bytes],
    ready: threading.Event,
    *,
    port: list[int],
    metrics: list[str],
    quiet: bool,
) -> None:
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace")
        serving = _METRICS.search(line)
        if serving and not port and not metrics:  # logged before "listening"
            metrics.append(serving.group(1))
        if not quiet:
            say(f"[{name}] {line}")
        found = _LISTENING.search(line)
        if found and not port:  # once its line is out: what follows comes after it
            port.append(int(found.group(1)))
            ready.set()
    ready.set()


def say(text: str) -> None:
    """Write ``text`` (whole lines) to stdout, never interleaved with another thread's."""
    with _OUTPUT:
        sys.stdout.write(text)
        sys.stdout.flush()


def _sleep(seconds: float) -> bool:
    time.sleep(seconds)
    return False


class _Stopper:
    """Stops what :func:`running_stack` started: gracefully, unless ``hurry`` says
    to kill everything at once (and from then on, everything left is killed)."""

    def __init__(self, hurry: Callable[[float], bool]) -> None:
        self._hurry = hurry
        self.hurried = False

    def _pause(self, seconds: float) -> bool:
        """Wait up to ``seconds`` (less if ``hurry`` returns early); True: kill now."""
        if not self.hurried:
            self.hurried = self._hurry(seconds)
        return self.hurried

    def _deadline_passed(self, deadline: float) -> bool:
        """One short wait towards ``deadline``; True once it passed or after a hurry."""
        left = deadline - time.monotonic()
        if left <= 0:
            return True
        return self._pause(min(left, _STEP))

    def processes(self, processes: Sequence[subprocess.Popen[bytes]]) -> None:
        """SIGTERM to each, then up to ``_SERVICE_GRACE`` s each before SIGKILL
        (SIGKILL at once after a hurry); every one is reaped."""
        self._pause(0)
        for process in processes:
            if process.poll() is None:
                if self.hurried:
                    process.kill()
                else:
                    process.terminate()
        for process in processes:
            deadline = time.monotonic() + _SERVICE_GRACE
            while process.poll() is None:
                if self._deadline_passed(deadline):
                    process.kill()
                    break
        for process in processes:
            if self.hurried and process.poll() is None:
                process.kill()
            process.wait()

    def redis(self, server: RedisServer) -> None:
        """The bundled Redis likewise: SIGTERM and up to ``_REDIS_GRACE`` s, or SIGKILL."""
        if server.running and not self._pause(0):
            os.kill(server.pid, signal.SIGTERM)
            deadline = time.monotonic() + _REDIS_GRACE
            while server.running and not self._deadline_passed(deadline):
                pass
        if self.hurried:
            server.kill()
        else:
            server.stop()  # reaps it (SIGKILL if it is still running) and removes its files


@contextlib.contextmanager
def running_stack(
    *,
    game_port: int,
    lobby_port: int,
    gateway_port: int = 0,
    quiet: bool = False,
    hurry: Callable[[float], bool] = _sleep,
) -> Iterator[tuple[Addresses, list[subprocess.Popen[bytes]]]]:
    """Redis (bundled unless REDIS_URL is set), the game service, the lobby and the
    REST gateway in front of both.

    Development defaults, each unless the environment sets it: TRUC_DEV_MODE=1
    without TRUC_JWT_SECRET, text logs, the gateway's CORS origins
    :data:`DEV_CORS_ORIGINS` (localhost on any port), and each service's
    metrics port by :func:`metrics_port` (printed: ``[serve] metrics: ...``).

    On the way out each service gets SIGTERM and up to 15 s to stop before
    SIGKILL, then the bundled Redis (5 s). ``hurry`` paces those waits: called
    with at most a few hundredths of a second, it waits up to that long and
    returns True when everything must be killed at once instead (``make
    serve``'s second Ctrl-C); the default only sleeps.
    """
    stopper = _Stopper(hurry)
    env = dict(os.environ)
    if not env.get("TRUC_JWT_SECRET"):
        env.setdefault("TRUC_DEV_MODE", "1")
    env.setdefault("TRUC_LOG_FORMAT", "text")  # for people; the services default to JSON
    env.setdefault("TRUC_GATEWAY_CORS_ORIGINS", DEV_CORS_ORIGINS)
    with contextlib.ExitStack() as stack:
        if not env.get("REDIS_URL"):
            redis = RedisServer().start()
            stack.callback(stopper.redis, redis)
            env["REDIS_URL"] = redis.url
            if not quiet:
                print(
                    f"[serve] redis listening on {redis.redacted_url}"
                    f" (bundled {redis.binary.name})",
                    flush=True,
                )
        processes: list[subprocess.Popen[bytes]] = []
        addresses: dict[str, str] = {}
        metrics: dict[str, str] = {}
        try:
            for name, module, port in (
                ("game", "truc_game", game_port),
                ("lobby", "truc_lobby", lobby_port),
                ("gateway", "truc_gateway", gateway_port),
            ):
                env_for = {
                    **env,
                    "TRUC_GAME_PORT": str(game_port),
                    "TRUC_LOBBY_PORT": str(port),
                    "TRUC_GATEWAY_PORT": str(port),
                    "TRUC_METRICS_PORT": metrics_port(name, port, env),
                }
                if name != "game":
                    env_for["TRUC_GAME_ADDRESS"] = addresses["game"]
                if name == "gateway":
                    env_for["TRUC_LOBBY_ADDRESS"] = addresses["lobby"]
                process = subprocess.Popen(
                    [sys.executable, "-m", module],
                    env=env_for,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    # Its own session: Ctrl-C reaches this script only, which then
                    # stops each service once (a second signal would skip the drain).
                    start_new_session=True,
                )
                processes.append(process)
                ready = threading.Event()
                found: list[int] = []
                serving: list[str] = []
                assert process.stdout is not None
                threading.Thread(
                    target=_relay,
                    args=(name, process.stdout, ready),
                    kwargs={"port": found, "metrics": serving, "quiet": quiet},
                    daemon=True,
                ).start()
                if not ready.wait(30) or not found:
                    raise RuntimeError(f"the {name} service did not start")
                addresses[name] = f"127.0.0.1:{found[0]}"
                if serving:
                    metrics[name] = serving[0]
            if not quiet and metrics:
                listed = ", ".join(f"{name} http://{at}/metrics" for name, at in metrics.items())
                say(f"[serve] metrics: {listed}\n")
            yield (
                Addresses(
                    env["REDIS_URL"],
                    addresses["game"],
                    addresses["lobby"],
                    addresses["gateway"],
                    metrics,
                ),
                processes,
            )
        finally:
            stopper.processes(processes)
