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
_SERVICE_GRACE = 15.0
"""Seconds each service has to stop after SIGTERM before it gets SIGKILL."""
_REDIS_GRACE = 5.0
"""Likewise for the bundled Redis (RedisServer.stop waits as long)."""
_STEP = 0.05
"""The longest single wait of a stop: how soon ``hurry`` is asked again."""


@dataclass(frozen=True, slots=True)
class Addresses:
    redis: str
    game: str
    lobby: str
    gateway: str


def _relay(
    name: str, stream: IO[bytes], ready: threading.Event, port: list[int], quiet: bool
) -> None:
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace")
        found = _LISTENING.search(line)
        if found and not port:
            port.append(int(found.group(1)))
            ready.set()
        if not quiet:
            sys.stdout.write(f"[{name}] {line}")
            sys.stdout.flush()
    ready.set()


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
                }
                if port == 0:  # on free ports (make run): metrics too, beside any other stack
                    env_for["TRUC_METRICS_PORT"] = "-1"
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
                assert process.stdout is not None
                threading.Thread(
                    target=_relay, args=(name, process.stdout, ready, found, quiet), daemon=True
                ).start()
                if not ready.wait(30) or not found:
                    raise RuntimeError(f"the {name} service did not start")
                addresses[name] = f"127.0.0.1:{found[0]}"
            yield (
                Addresses(
                    env["REDIS_URL"], addresses["game"], addresses["lobby"], addresses["gateway"]
                ),
                processes,
            )
        finally:
            stopper.processes(processes)
