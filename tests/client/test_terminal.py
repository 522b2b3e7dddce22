"""Terminal play (``truc play``) as a real subprocess against a real stack: a game
service and two lobbies on Redis, the human's stdin a pipe that keeps answering,
five bots queued through the lobby by the client, a short match (rule options
target_score and manches_to_win passed at queue time) and 4-second turns. The
human's seat (and the bots') play over Play sessions: the game service's
metrics count no unary SubmitAction at all."""

from __future__ import annotations

import queue
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import IO

import pytest

from tests.lobby_service.conftest import Stack
from tests.service.conftest import redis_server  # noqa: F401
from truc_dev_redis import RedisServer

TURN_SECONDS = 4
PROMPT = "> your move?"


@pytest.fixture(scope="module")
def services(redis_server: RedisServer) -> Iterator[Stack]:  # noqa: F811
    started = Stack(
        redis_server.url, TRUC_BOT_WAIT_SECONDS="0", TRUC_GAME_TURN_SECONDS=str(TURN_SECONDS)
    )
    yield started
    started.stop()


def play(
    services: Stack, answer: Callable[[int, list[str]], str | None], *extra: str
) -> tuple[int, list[str]]:
    """Run ``truc play`` with plain output; at each prompt write ``answer(n, lines)``
    (``None``: write nothing and let the turn time out). The exit code and the lines."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "truc_client.cli",
            "play",
            "--lobby",
            services.lobbies[0].address,
            "--game",
            services.game.address,
            "--bot-think",
            "0",
            "--target-score",
            "6",
            "--manches",
            "1",
            "--hand-pause",
            "0",
            *extra,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        encoding="utf-8",
        bufsize=1,
    )
    assert process.stdin is not None and process.stdout is not None
    lines: list[str] = []
    incoming: queue.Queue[str | None] = queue.Queue()

    def read(stream: IO[str]) -> None:
        for line in stream:
            incoming.put(line)
        incoming.put(None)

    threading.Thread(target=read, args=(process.stdout,), daemon=True).start()
    prompts = 0
    deadline = time.monotonic() + 55
    try:
        while True:
            line = incoming.get(timeout=max(0.1, deadline - time.monotonic()))
            if line is None:
                break
            lines.append(line.rstrip("\n"))
            if line.startswith(PROMPT):
                reply = answer(prompts, lines)
                prompts += 1
                if reply is not None:
                    process.stdin.write(reply + "\n")
                    process.stdin.flush()
        return process.wait(10), lines
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        process.stdin.close()
        process.stdout.close()


_ACTIONS = re.compile(r'^truc_actions_total\{kind="(\w+)",origin="(\w+)"\} ([0-9.e+]+)$', re.M)


def actions_by_origin(services: Stack) -> dict[str, float]:
    """The game service's applied actions by origin: ``player`` (unary
    SubmitAction), ``session`` (an action on a Play session), ``deadline``."""
    assert services.game.metrics_url is not None
    with urllib.request.urlopen(services.game.metrics_url, timeout=5) as reply:
        text = reply.read().decode()
    totals: dict[str, float] = {}
    for _, origin, value in _ACTIONS.findall(text):
        totals[origin] = totals.get(origin, 0.0) + float(value)
    return totals


def assert_played_over_sessions(services: Stack, before: dict[str, float]) -> None:
    after = actions_by_origin(services)
    assert after.get("session", 0) > before.get("session", 0), after
    assert after.get("player", 0) == before.get("player", 0) == 0, after  # no SubmitAction


def offered(lines: list[str], key: str) -> bool:
    """The last choices printed (before the prompt) offer ``key``."""
    for line in reversed(lines[:-1]):
        if line.startswith(PROMPT):
            return False
        if f"{key}) " in line:
            return True
    return False


def test_a_human_plays_a_whole_match_against_five_bots(services: Stack) -> None:
    # Two refused inputs, a turn left to time out, then "?" explains the choices.
    script = {0: "99", 1: "x", 2: None, 3: "?"}
    signalled: list[int] = []

    def answer(n: int, lines: list[str]) -> str | None:
        if n in script:
            return script[n]
        if not signalled and offered(lines, "s1"):
            signalled.append(n)
            return "s1"
        return "1"

    before = actions_by_origin(services)
    code, lines = play(services, answer, "--name", " José María ")
    out = "\n".join(lines)
    assert code == 0, out[-3000:]
    assert_played_over_sessions(services, before)
    # Display names: the human's as the lobby kept it (trimmed), the bots by seat.
    assert "signed in as José María (JoseMaria-" in out
    assert re.search(r"^   (captain )?S\d\([AB]\) José María$", out, re.M)
    assert len(re.findall(r"^   (captain )?S\d\([AB]\) Bot \d$", out, re.M)) == 5
    assert "José María (you)" in out
    # "?": every choice with a line of explanation, then the prompt again.
    explained = [i for i, line in enumerate(lines) if line.startswith("? 1) ")]
    assert explained and " — " in lines[explained[0]]
    assert any(line.startswith(PROMPT) for line in lines[explained[0] :])
    # The draw is told: who drew the lower card names the first dealer.
    assert "drew the lower card in trick order, so team " in out
    # Each hand ends with its summary, scores in A-B order, before the next hand.
    summaries = [i for i, line in enumerate(lines) if re.match(r"  hand \d+ (to|over)", line)]
    assert summaries, out[-3000:]
    assert re.match(r"  points A \d+ - B \d+ · manches A \d - B \d", lines[summaries[0] + 1]) or (
        re.match(r"  .* accepted", lines[summaries[0] + 1])
    )
    assert re.search(
        r"^match over: team [AB] wins, manches A \d - B \d, after \d+ hands?: ", out, re.M
    )
    # The table, the hand, the numbered choices, the timer.
    assert "seated in games/" in out
    assert "S0(A) ★captain" in out and "S3(B) ★captain" in out
    assert "your hand: " in out and "team signals: " in out
    assert re.search(r"your move: 1\) (play|call|name) ", out)
    assert re.search(r"⏱ \d+ s left", out)
    # Invalid inputs are refused with a message and asked again.
    refused = [i for i, line in enumerate(lines) if "is not a choice" in line]
    assert len(refused) == 2 and "'99'" in lines[refused[0]] and "'x'" in lines[refused[1]]
    assert all(lines[i + 1].startswith(PROMPT) for i in refused)
    # The third prompt went unanswered: the service acted for the seat, new choices came.
    timed_out = next(i for i, line in enumerate(lines) if "ran out of time" in line)
    assert any(line.startswith(PROMPT) for line in lines[timed_out:])
    # The human sent a team message; calls and the match's end were narrated.
    assert signalled, "no signal or directive was ever offered"
    assert re.search(r"you: (signal|direct) ", out)
    assert re.search(r"S\d\([AB]\) [^:\n]*(signals \w+ to the team|directs the team)", out)
    assert "wins the match" in out
    assert lines[-1].startswith("match over: team ")


def test_q_leaves_the_table_cleanly(services: Stack) -> None:
    code, lines = play(services, lambda n, lines: "q")
    assert code == 0, "\n".join(lines)[-3000:]
    assert lines[-1].startswith("you left the table")


def test_a_human_plays_french_truc_against_one_bot(services: Stack) -> None:
    """``truc play --ruleset french_truc``: a table of two, the piquet pack, the
    calls of French Truc offered in words, the match played to its end."""
    before = actions_by_origin(services)
    code, lines = play(services, lambda n, lines: "1", "--ruleset", "french_truc")
    out = "\n".join(lines)
    assert code == 0, out[-3000:]
    assert_played_over_sessions(services, before)
    assert "1 bot queued the same way for french_truc" in out
    assert "seated in games/" in out
    seating = lines[next(i for i, line in enumerate(lines) if "seated in games/" in line) + 1 :]
    assert [line.split()[0] for line in seating[:2]] == ["S0(A)", "S1(B)"]
    assert "captain" not in out and "S2(" not in out
    held = [
        card
        for line in lines
        if line.startswith("your hand: ") and "(no cards)" not in line
        for card in line.removeprefix("your hand: ").split()
    ]
    assert held and all(re.fullmatch(r"[789TJQKA](He♥|Di♦|Cl♣|Sp♠)", c) for c in held), held
    assert re.search(r"your move: 1\) play [789TJQKA](He|Di|Cl|Sp)", out)
    assert 'call RAISE ("two more?")' in out
    assert "── hand 1 (game 1):" in out and "games A " in out
    assert "wins the match" in out
    assert lines[-1].startswith("match over: team ")
