"""Running the Node.js client (clients/node/play.js) from the tests: where it
is, whether it can run here, a process whose output is read as it comes, and
the game service's counters that tell which path its actions took."""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from tests.service.conftest import SECRET, Replica
from truc_service.tokens import issue_token

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "node"
NODE = shutil.which("node")

needs_node = pytest.mark.skipif(
    NODE is None or not (CLIENT / "node_modules" / "@grpc" / "grpc-js").is_dir(),
    reason=(
        "node not found on PATH: the Node.js client is not tested"
        if NODE is None
        else "clients/node/node_modules is missing: run make node-deps"
    ),
)

_SAMPLE = re.compile(r"^(truc_[a-z_]+)\{([^}]*)\} ([0-9.e+]+)$")


def counters(replica: Replica) -> Counter[str]:
    """A game service's applied actions by origin and session messages by kind,
    from its metrics: {"actions/session": n, "actions/player": n (SubmitAction),
    "messages/repeated": n, "messages/refused": n, ...}."""
    assert replica.metrics_url is not None, replica.log()
    with urllib.request.urlopen(replica.metrics_url, timeout=10) as reply:
        text = reply.read().decode()
    counts: Counter[str] = Counter()
    for line in text.splitlines():
        sample = _SAMPLE.match(line)
        if sample is None:
            continue
        labels = dict(re.findall(r'([a-z_]+)="([^"]*)"', sample[2]))
        if sample[1] == "truc_actions_total":
            counts["actions/" + labels["origin"]] += int(float(sample[3]))
        elif sample[1] == "truc_session_messages_total":
            counts["messages/" + labels["kind"]] += int(float(sample[3]))
    return counts


def change(before: Counter[str], after: Counter[str]) -> Counter[str]:
    """What each counter gained between two readings (a counter never seen: 0)."""
    gained = Counter(after)
    gained.subtract(before)
    return gained


class NodeClient:
    """One ``node play.js --join`` process (with ``--trace``); its output read
    as it comes, by one thread (stderr's few lines go with it)."""

    def __init__(self, addresses: list[str], game: str, player: str, *options: str) -> None:
        assert NODE is not None
        token = issue_token(SECRET, player, role="player", ttl_seconds=600)
        command = [
            NODE,
            str(CLIENT / "play.js"),
            *("--game", ",".join(addresses), "--join", game, "--token", token),
            "--trace",
            *("--timeout", "60"),
            *options,
        ]
        self.player = player
        self.lines: list[str] = []
        self._seen = threading.Condition()
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        with self.process.stdout:
            for line in self.process.stdout:
                with self._seen:
                    self.lines.append(line.rstrip("\n"))
                    self._seen.notify_all()

    def wait_for_line(self, pattern: str, timeout: float) -> None:
        with self._seen:
            found = self._seen.wait_for(
                lambda: any(re.search(pattern, line) for line in self.lines), timeout
            )
        assert found, f"no line {pattern!r} within {timeout} s:\n" + "\n".join(self.lines[-40:])

    def finish(self) -> str:
        """Waits for the exit (status 0 asserted); the whole output."""
        try:
            self.process.wait(timeout=70)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait(10)
            self._reader.join(10)
        out = "\n".join(self.lines)
        assert self.process.returncode == 0, out[-3000:]
        return out
