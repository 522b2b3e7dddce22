"""A service signalled while it starts stops gracefully once started: its signal
handlers are in place before it starts (truc_service.process.serve_until_signal),
so a SIGTERM that comes between "metrics on" and "listening" (as ``make serve``
may send one right after the last service came up) is not the default action,
which kills the process without draining."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration


def test_a_sigterm_while_the_gateway_starts_stops_it_gracefully() -> None:
    env = {
        **os.environ,
        "TRUC_GATEWAY_PORT": "0",
        "TRUC_METRICS_PORT": "-1",
        "TRUC_LOG_FORMAT": "text",
        "TRUC_GAME_ADDRESS": "127.0.0.1:1",
        "TRUC_LOBBY_ADDRESS": "127.0.0.1:1",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "truc_gateway"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    lines: list[str] = []
    try:
        for line in process.stdout:
            lines.append(line)
            if "metrics on" in line:  # logged inside start(), before it listens
                process.send_signal(signal.SIGTERM)
                break
        rest, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    output = "".join(lines) + rest
    assert process.returncode == 0, output
    assert "gateway listening on" in output, output
    assert output.rstrip().endswith("stopped"), output
