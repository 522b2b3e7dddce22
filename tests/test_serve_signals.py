"""`make serve` (tools/serve.py) under signals: the first SIGTERM stops the
services gracefully, a second one kills them at once, a burst of them neither
hangs nor crashes the script, and a service that exits stops the others. Every
check is on the real script, its bundled Redis and the three services, on
free ports."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1]
SERVICES = ("game", "lobby", "gateway")
STARTUP = 60.0
"""Seconds the stack may take to start (it takes about two)."""
EXIT_WITHIN = 20.0
"""Seconds serve.py may take to exit after the signals (a graceful stop takes about one)."""
BURST_GAP = 200e-6
BURST_SECONDS = 0.6
"""The burst: a SIGTERM every 200 µs for up to 600 ms (until serve.py exits). A
handler that takes a lock hangs when a signal lands while another signal is
being handled, a window of a microsecond or so; some of these 3,000 signals
land in it nearly every time (a tight loop of os.kill mostly gets merged by the
kernel into a few deliveries, and misses it)."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass(frozen=True, slots=True)
class Child:
    """A process, told apart from a later one that reuses its pid by its start time."""

    pid: int
    started: str
    command: str


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command (state first), or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def _children(parent: int) -> set[Child]:
    found: set[Child] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat(int(entry.name))
        if fields is None or int(fields[1]) != parent:
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        found.add(Child(int(entry.name), fields[19], command))
    return found


def _alive(child: Child) -> bool:
    fields = _stat(child.pid)
    return fields is not None and fields[19] == child.started and fields[0] != "Z"


class Serve:
    """tools/serve.py in a session of its own, its output collected line by line."""

    def __init__(self) -> None:
        env = {
            **os.environ,
            "TRUC_GAME_PORT": str(_free_port()),
            "TRUC_LOBBY_PORT": str(_free_port()),
            "TRUC_GATEWAY_PORT": str(_free_port()),
        }
        env.pop("REDIS_URL", None)  # its own bundled Redis
        # Not the default ports: serve.py puts the metrics on free ports itself.
        env.pop("TRUC_METRICS_PORT", None)
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "tools" / "serve.py")],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.lines: list[str] = []
        self._listening: set[str] = set()
        self._ready = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.children: set[Child] = set()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            line = raw.decode(errors="replace")
            self.lines.append(line)
            for name in SERVICES:
                if line.startswith(f"[{name}]") and "listening on" in line:
                    self._listening.add(name)
            if len(self._listening) == len(SERVICES):
                self._ready.set()
        self._ready.set()

    def output(self, last: int = 60) -> str:
        return "".join(self.lines[-last:])

    def start(self) -> None:
        """Until the three services listen; then records serve.py's children."""
        if not self._ready.wait(STARTUP) or len(self._listening) != len(SERVICES):
            pytest.fail(f"the stack did not start:\n{self.output()}")
        self.children = _children(self.process.pid)
        commands = " | ".join(c.command for c in self.children)
        assert len(self.children) == 4, f"expected Redis and three services: {commands}"
        for module in ("truc_game", "truc_lobby", "truc_gateway"):
            assert module in commands, commands

    def signal(self, signum: int = signal.SIGTERM) -> None:
        os.kill(self.process.pid, signum)

    def exit_status(self) -> int:
        """serve.py's exit status, within EXIT_WITHIN seconds (else the test fails)."""
        try:
            status = self.process.wait(EXIT_WITHIN)
        except subprocess.TimeoutExpired:
            alive = sorted(c.pid for c in self.children if _alive(c))
            pytest.fail(
                f"serve.py did not exit within {EXIT_WITHIN:g} s (services still running:"
                f" {alive}):\n{self.output()}"
            )
        self._reader.join(10)  # its last lines
        return status

    def assert_services_gone(self) -> None:
        deadline = time.monotonic() + 5
        while (alive := [c for c in self.children if _alive(c)]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive, f"left running: {alive}\n{self.output()}"

    def close(self) -> None:
        """Whatever happened: no serve.py, no service left behind."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        for child in self.children:
            if _alive(child):
                os.kill(child.pid, signal.SIGKILL)
        self._reader.join(10)
        assert self.process.stdout is not None
        self.process.stdout.close()


@pytest.fixture
def serve() -> Iterator[Serve]:
    started = Serve()
    try:
        started.start()
        yield started
    finally:
        started.close()


def _assert_no_traceback(serve: Serve) -> None:
    text = "".join(serve.lines)
    assert "Traceback" not in text and "Fatal Python error" not in text, serve.output(200)


def test_one_sigterm_stops_the_services_gracefully(serve: Serve) -> None:
    serve.signal()
    assert serve.exit_status() == 0, serve.output()
    serve.assert_services_gone()
    for name in SERVICES:  # each drained and said so: none was killed
        said = [line for line in serve.lines if line.startswith(f"[{name}]")]
        assert any(": stopped" in line for line in said), serve.output()
    _assert_no_traceback(serve)


def test_a_second_sigterm_kills_the_services_at_once(serve: Serve) -> None:
    serve.signal()
    time.sleep(0.05)  # the graceful stop has begun (it takes about half a second)
    serve.signal()
    assert serve.exit_status() == 128 + signal.SIGTERM, serve.output()
    serve.assert_services_gone()
    assert "[serve] signalled again: the services were killed\n" in serve.lines
    _assert_no_traceback(serve)


def _spin(seconds: float) -> None:
    """Busy-wait: a sleep of a few microseconds lasts far longer."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_a_burst_of_sigterms_neither_hangs_nor_crashes_serve(serve: Serve) -> None:
    end = time.monotonic() + BURST_SECONDS
    while time.monotonic() < end and serve.process.poll() is None:
        serve.signal()
        _spin(BURST_GAP)
    assert serve.exit_status() == 128 + signal.SIGTERM, serve.output()
    serve.assert_services_gone()
    _assert_no_traceback(serve)


def test_a_service_that_exits_stops_the_others(serve: Serve) -> None:
    game = next(c for c in serve.children if "truc_game" in c.command)
    os.kill(game.pid, signal.SIGKILL)
    assert serve.exit_status() == 1, serve.output()
    assert "[serve] a service exited; stopping the others\n" in serve.lines
    serve.assert_services_gone()
    _assert_no_traceback(serve)


_METRICS = re.compile(r"(game|lobby|gateway) http://127\.0\.0\.1:(\d+)/metrics")
DEFAULT_METRICS_PORTS = {9464, 9465, 9466}


def test_services_on_other_ports_serve_their_metrics_on_free_ports(serve: Serve) -> None:
    """Changing the service ports (as Serve does) moves the metrics too, to free
    ports that serve.py prints, so that two stacks never share one."""
    deadline = time.monotonic() + 10
    while not (said := [x for x in serve.lines if x.startswith("[serve] metrics: ")]):
        assert time.monotonic() < deadline, serve.output()
        time.sleep(0.05)
    ports = {name: int(port) for name, port in _METRICS.findall(said[0])}
    assert set(ports) == set(SERVICES), said
    assert len(set(ports.values())) == 3 and not DEFAULT_METRICS_PORTS & set(ports.values())
    for name, port in ports.items():
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
            assert reply.status == 200 and b"# TYPE" in reply.read(), name
    serve.signal()
    assert serve.exit_status() == 0, serve.output()
