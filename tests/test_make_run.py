"""`make run`'s main job: a whole match of six clients through the real lobby and
game service (started by the script on free ports, with a bundled Redis)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1]


def test_the_demo_plays_a_whole_match_through_the_services() -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "run.py")],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    out = done.stdout
    assert "seated in games/" in out
    assert "captain S0(A)" in out and "captain S3(B)" in out
    assert "plays" in out and "trick 1" in out
    assert "══ team" in out and "wins the match" in out
    assert out.rstrip().splitlines()[-1].startswith("match over: team ")
