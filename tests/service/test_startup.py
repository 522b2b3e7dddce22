"""A production game process never brings its own Redis: without ``REDIS_URL``
it refuses to start, saying what to set (dev mode included; ``make serve`` and
``make run`` start the bundled development Redis and pass its URL)."""

from __future__ import annotations

import os
import subprocess
import sys


def test_the_game_service_refuses_to_start_without_redis_url() -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env.update(TRUC_DEV_MODE="1", TRUC_METRICS_PORT="0", TRUC_GAME_PORT="0")
    done = subprocess.run(
        [sys.executable, "-m", "truc_game"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "truc-game: configuration error: REDIS_URL is not set" in done.stderr
    assert "listening" not in done.stderr + done.stdout
