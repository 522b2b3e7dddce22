"""Start the services as processes for `make serve` and `make run`."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from truc_dev_redis import RedisServer

_LISTENING = re.compile(r"listening on [^:]+:(\d+)")


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


@contextlib.contextmanager
def running_stack(
    *, game_port: int, lobby_port: int, gateway_port: int = 0, quiet: bool = False
) -> Iterator[tuple[Addresses, list[subprocess.Popen[bytes]]]]:
    """Redis (bundled unless REDIS_URL is set), the game service, the lobby and the
    REST gateway in front of both."""
    env = dict(os.environ)
    if not env.get("TRUC_JWT_SECRET"):
        env.setdefault("TRUC_DEV_MODE", "1")
    env.setdefault("TRUC_LOG_FORMAT", "text")  # for people; the services default to JSON
    with contextlib.ExitStack() as stack:
        if not env.get("REDIS_URL"):
            redis = stack.enter_context(RedisServer())
            env["REDIS_URL"] = redis.url
            if not quiet:
                print(
                    f"[serve] redis listening on {redis.url} (bundled {redis.binary.name})",
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
            for process in processes:
                if process.poll() is None:
                    process.terminate()
            for process in processes:
                try:
                    process.wait(15)
                except subprocess.TimeoutExpired:
                    process.kill()
