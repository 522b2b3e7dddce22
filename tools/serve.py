"""``make serve``: Redis (bundled unless REDIS_URL is set), the game service, the
lobby and the REST gateway, each as its own process, in the foreground until Ctrl-C.

Ports: TRUC_GAME_PORT (50051), TRUC_LOBBY_PORT (50052) and TRUC_GATEWAY_PORT
(8080). Every other setting is passed through from the environment (see
truc_game/config.py, truc_lobby/config.py and truc_gateway/config.py); without
TRUC_JWT_SECRET the services run in development mode.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

from stack import running_stack


def main() -> int:
    game_port = int(os.environ.get("TRUC_GAME_PORT", "50051"))
    lobby_port = int(os.environ.get("TRUC_LOBBY_PORT", "50052"))
    gateway_port = int(os.environ.get("TRUC_GATEWAY_PORT", "8080"))
    stopping = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    with running_stack(game_port=game_port, lobby_port=lobby_port, gateway_port=gateway_port) as (
        _,
        processes,
    ):
        while not stopping.wait(0.5):
            if any(p.poll() is not None for p in processes):
                print("[serve] a service exited; stopping the others", flush=True)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
