"""``make run RULESET=...`` and ``make run PLAY=1 RULESET=...`` (``tools/run.py``):
the script starts Redis, the game service and the lobby on free ports and plays
a match of the rule set through them, scripted or with a human at one seat (its
stdin a pipe here that always answers the first choice)."""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
ENV = {"PATH": "/usr/bin:/bin", "HOME": str(ROOT)}
PROMPT = "> your move?"


def test_run_plays_a_french_truc_match_of_two_clients() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "run.py"), "--ruleset", "french_truc", "--pace", "0"],
        capture_output=True,
        text=True,
        timeout=180,
        env=ENV,
        check=False,
    )
    out = done.stdout
    assert done.returncode == 0, out[-2000:] + done.stderr[-2000:]
    assert "2 guests queued for french_truc" in out
    assert "seated in games/" in out and "captain" not in out
    assert "── hand 1 (game 1):" in out
    assert "   trick 1: S" in out or "concedes" in out or "folds" in out
    assert "   S0(A) " in out and "   S1(B) " in out  # both hands as dealt
    assert "══ game to team " in out and "wins the match" in out
    assert out.rstrip().splitlines()[-1].startswith("match over: team ")


def test_run_play_seats_a_human_at_a_partnership_table() -> None:
    process = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "tools" / "run.py"),
            "--play",
            "--ruleset",
            "partnership_truc",
            "--bot-think",
            "0",
            "--target-score",
            "4",
            "--manches",
            "1",
            "--hand-pause",
            "0",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        encoding="utf-8",
        bufsize=1,
        env=ENV,
    )
    assert process.stdin is not None and process.stdout is not None
    incoming: queue.Queue[str | None] = queue.Queue()

    def read(stream: IO[str]) -> None:
        for line in stream:
            incoming.put(line)
        incoming.put(None)

    threading.Thread(target=read, args=(process.stdout,), daemon=True).start()
    lines: list[str] = []
    deadline = time.monotonic() + 150
    try:
        while True:
            line = incoming.get(timeout=max(0.1, deadline - time.monotonic()))
            if line is None:
                break
            lines.append(line.rstrip("\n"))
            if line.startswith(PROMPT):
                process.stdin.write("1\n")
                process.stdin.flush()
        code = process.wait(20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        process.stdin.close()
        process.stdout.close()
    out = "\n".join(lines)
    assert code == 0, out[-3000:]
    assert "services up: game " in out
    assert "3 bots queued the same way for partnership_truc" in out
    assert "each hand the dealer and eldest govern their sides" in out
    assert "★governor" in out and "governors: " in out
    assert any(line.startswith(PROMPT) for line in lines)
    assert "wins the match" in out
    assert lines[-1].startswith("match over: team ")
