"""``make serve``: Redis (bundled unless REDIS_URL is set), the game service, the
lobby and the REST gateway, each as its own process, in the foreground until Ctrl-C.

Ports: TRUC_GAME_PORT (50051), TRUC_LOBBY_PORT (50052) and TRUC_GATEWAY_PORT
(8080; the web app at http://127.0.0.1:8080/). Metrics: 9464, 9465 and 9466
while those ports are the defaults; a service moved to another port serves its
metrics on a free port instead, so two stacks never share one (TRUC_METRICS_PORT
overrides: 0 off, -1 free ports, N for N, N+1, N+2); the script prints where
("[serve] metrics: ..."). Every other setting is passed through from the
environment (see truc_game/config.py, truc_lobby/config.py and
truc_gateway/config.py); without TRUC_JWT_SECRET the services run in development
mode, and unless TRUC_GATEWAY_CORS_ORIGINS is set the gateway allows browser
calls from any localhost origin (http://localhost, 127.0.0.1 or [::1] on any
port: a front-end's dev server), which its production default does not.

Stopping. The first SIGINT (Ctrl-C) or SIGTERM stops the services gracefully:
each gets SIGTERM and up to 15 s to drain before SIGKILL, then the bundled
Redis; the exit status is 0. A second signal during that stop kills whatever is
still running at once (SIGKILL) and exits with 128 + the signal's number. When a
service exits by itself, the script says "[serve] a service exited; stopping
the others", stops them the same way and exits with 1 (a signal during that
stop kills them at once).

The services run in sessions of their own, so a Ctrl-C reaches this script
only. Its signal handlers do nothing at all: CPython's C-level handler writes
one byte per signal to a wakeup socket (:func:`signal.set_wakeup_fd`), which
the main thread counts and waits on with ``select``. No handler takes a lock,
so a signal landing while another is being handled cannot deadlock the script
(a ``threading.Event.set`` in the handler could: it takes the event's lock).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import sys
from types import FrameType

from stack import DEFAULT_PORTS, running_stack

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _ignore(signum: int, frame: FrameType | None) -> None:
    """The Python-level handler: nothing (the wakeup socket records the signal)."""


class _Signals:
    """SIGINT and SIGTERM, counted from the wakeup socket the interpreter writes
    to inside the C signal handler (one byte, the signal's number, per signal)."""

    def __init__(self) -> None:
        self.count = 0
        self.last = 0
        self._reader, self._writer = socket.socketpair()
        self._reader.setblocking(False)
        self._writer.setblocking(False)
        signal.set_wakeup_fd(self._writer.fileno(), warn_on_full_buffer=False)
        for signum in _SIGNALS:
            signal.signal(signum, _ignore)

    def wait(self, seconds: float) -> int:
        """Wait up to ``seconds``, less if a signal arrives; how many arrived so far."""
        select.select([self._reader], [], [], seconds)
        while True:
            try:
                received = self._reader.recv(4096)
            except BlockingIOError:
                break
            if not received:
                break
            self.count += len(received)
            self.last = received[-1]
        return self.count

    def close(self) -> None:
        """Ignore further signals (nothing is left to stop, and a late one must not
        turn a clean exit into a death by signal) and close the socket."""
        for signum in _SIGNALS:
            signal.signal(signum, signal.SIG_IGN)
        signal.set_wakeup_fd(-1)
        self._reader.close()
        self._writer.close()


def main() -> int:
    game_port, lobby_port, gateway_port = (
        int(os.environ.get(f"TRUC_{name.upper()}_PORT", str(port)))
        for name, (port, _) in DEFAULT_PORTS.items()
    )
    signals = _Signals()
    patience = 1  # signals the stop takes before it kills: the one that started it
    hurried = False

    def hurry(seconds: float) -> bool:
        nonlocal hurried
        hurried = hurried or signals.wait(seconds) > patience
        return hurried

    status = 0
    try:
        with running_stack(
            game_port=game_port, lobby_port=lobby_port, gateway_port=gateway_port, hurry=hurry
        ) as (_, processes):
            while not signals.wait(0.5):
                if any(p.poll() is not None for p in processes):
                    print("[serve] a service exited; stopping the others", flush=True)
                    patience, status = 0, 1
                    break
        if hurried:
            print("[serve] signalled again: the services were killed", flush=True)
            status = 128 + signals.last
    finally:
        with contextlib.suppress(OSError, ValueError):
            signals.close()
    return status


if __name__ == "__main__":
    sys.exit(main())
