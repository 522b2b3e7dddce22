"""``make serve``: Redis (bundled unless REDIS_URL is set), the game service and
the lobby, each as its own process, in the foreground until Ctrl-C.

Ports: TRUC_GAME_PORT (50051) and TRUC_LOBBY_PORT (50052). Every other setting
is passed through from the environment (see truc_game/config.py and
truc_lobby/config.py); without TRUC_JWT_SECRET both run in development mode.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from typing import IO

from truc_game.redis_server import RedisServer


def _relay(name: str, stream: IO[bytes]) -> None:
    for line in iter(stream.readline, b""):
        sys.stdout.write(f"[{name}] {line.decode(errors='replace')}")
        sys.stdout.flush()


def main() -> int:
    env = dict(os.environ)
    if not env.get("TRUC_JWT_SECRET"):
        env.setdefault("TRUC_DEV_MODE", "1")
    env.setdefault("TRUC_GAME_PORT", "50051")
    env.setdefault("TRUC_LOBBY_PORT", "50052")
    env.setdefault("TRUC_GAME_ADDRESS", f"127.0.0.1:{env['TRUC_GAME_PORT']}")
    with contextlib.ExitStack() as stack:
        if not env.get("REDIS_URL"):
            redis = stack.enter_context(RedisServer())
            env["REDIS_URL"] = redis.url
            print(
                f"[serve] redis listening on {redis.url} (bundled {redis.binary.name})", flush=True
            )
        processes = []
        for name, module in (("game", "truc_game"), ("lobby", "truc_lobby")):
            process = subprocess.Popen(
                [sys.executable, "-m", module],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
            assert process.stdout is not None
            threading.Thread(target=_relay, args=(name, process.stdout), daemon=True).start()
            processes.append(process)
        stopping = threading.Event()

        def stop(*_: object) -> None:
            stopping.set()

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        while not stopping.wait(0.5):
            if any(p.poll() is not None for p in processes):
                print("[serve] a service exited; stopping the others", flush=True)
                break
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for process in processes:
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
        return max((p.returncode or 0) for p in processes)


if __name__ == "__main__":
    sys.exit(main())
