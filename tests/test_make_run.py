"""`make run`'s main job: a whole match of six clients through the real lobby and
game service (started by the script on free ports, with a bundled Redis), told
hand by hand: every seat's cards as dealt (each from its own seat's view), one
line per trick, each hand's summary, scores always A first; ``make run
ARGS="..."`` passes rule options (checked, with clear errors) and the pace."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1]
ENV = {"PATH": "/usr/bin:/bin", "HOME": str(ROOT)}
HOLDS = re.compile(r"^   S(\d)\([AB]\) \S.* holds (\S+ ){2}\S+( |$)")


def run(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "run.py"), *argv],
        capture_output=True,
        text=True,
        timeout=180,
        env={**ENV, **(env or {})},
        check=False,
    )


def test_the_demo_tells_a_whole_match_hand_by_hand_with_every_seats_cards() -> None:
    done = run("--pace", "0")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    out = done.stdout
    lines = out.rstrip().splitlines()
    assert "seated in games/" in out
    assert re.search(r"^   captain S0\(A\) \w", out, re.M)
    assert re.search(r"^   captain S3\(B\) \w", out, re.M)
    assert "drew the lower card in trick order" in out and "first dealer" in out
    assert len(lines) < 700, len(lines)  # readable: no longer a wall of 800 lines
    # Every hand shows the six hands as dealt, seat 0 to 5, right after its header.
    headers = [i for i, line in enumerate(lines) if line.startswith("── hand ")]
    assert len(headers) >= 2
    for i in headers:
        seats = [HOLDS.match(line) for line in lines[i + 1 : i + 7]]
        assert all(seats), lines[i : i + 7]
        assert [int(m.group(1)) for m in seats if m] == list(range(6))
    # A trick is one line; a hand ends with its summary and the running score, A first.
    assert re.search(r"^   trick 1: (S\d\([AB]\) \S+ · ){5}S\d\([AB]\) \S+ → ", out, re.M)
    summaries = re.findall(
        r"^hand \d+ (?:to|over).*· points A \d+ - B \d+ · manches A \d - B \d", out, re.M
    )
    assert len(summaries) == len(headers)
    assert re.search(r"^══ team [AB] wins the match, manches A \d - B \d$", out, re.M)
    final = re.fullmatch(
        r"match over: team ([AB]) wins, manches A (\d) - B (\d), after \d+ hands?", lines[-1]
    )
    assert final is not None, lines[-1]
    winner, a, b = final.groups()
    assert (int(a) > int(b)) == (winner == "A")  # A's count first, whoever won


def test_make_run_passes_args_rule_options_and_the_pace() -> None:
    started = time.monotonic()
    done = subprocess.run(
        ["make", "-s", "run", "ARGS=--target-score 3 --manches 1 --pace 0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        env=ENV,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    out = done.stdout
    ended = re.findall(r"^══ manche to team [AB], points A (\d+) - B (\d+);", out, re.M)
    assert len(ended) == 1 and max(map(int, ended[0])) == 3, out[-2000:]  # to 3 points
    assert re.search(r"^match over: team [AB] wins, manches A [01] - B [01], after", out, re.M)
    assert time.monotonic() - started < 120
    # RUN_PACE: a pause after each hand (but the last).
    paced_start = time.monotonic()
    paced = run("--target-score", "3", "--manches", "2", env={"RUN_PACE": "0.5"})
    assert paced.returncode == 0, paced.stdout[-2000:] + paced.stderr[-2000:]
    hands = len(re.findall(r"^── hand ", paced.stdout, re.M))
    assert hands >= 2 and time.monotonic() - paced_start >= 0.5 * (hands - 1)


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (("--seats", "4"), "run.py: --seats: truc_y_flou is played by 6 seats, not 4"),
        (("--target-score", "0.5"), "argument --target-score: invalid int value"),
        (("--ruleset", "french_truc", "--cut", "cutter"), "run.py: --cut: french_truc has no"),
        (("--pace", "-1"), "argument --pace: 0 to 60 seconds"),
        (("--no-such-option",), "unrecognized arguments: --no-such-option"),
    ],
)
def test_run_refuses_bad_options_before_starting_anything(
    argv: tuple[str, ...], problem: str
) -> None:
    done = run(*argv)
    assert done.returncode == 2
    assert problem in done.stderr, done.stderr
    assert "services up" not in done.stdout
