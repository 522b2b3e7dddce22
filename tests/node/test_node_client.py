"""The Node.js client (clients/node) plays one seat of a real match: it signs in
through a real lobby, is seated with five of the lobby's bots, and plays its seat
through the game service to the end. What it claims is checked independently,
through a spectator's GetGame and the lobby's bot jobs in Redis."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import google.rpc
import pytest
import redis
from truc.v1 import game_pb2, game_service_pb2

from tests.lobby_service.aio_lobby import purge_lobby_queue
from tests.lobby_service.conftest import Stack, start_stack
from tests.service.conftest import auth, redis_server, stub  # noqa: F401
from truc_dev_redis import RedisServer
from truc_lobby.store import ticket_key

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

TARGET_SCORE = 6
"""A short match (one manche to 6) keeps the test to a few seconds."""


@pytest.fixture(scope="module")
def bot_stack(redis_server: RedisServer) -> Iterator[Stack]:  # noqa: F811
    """A stack whose lobbies fill a table with their bots after 1 s (0 would
    disable bots: see TRUC_BOT_WAIT_SECONDS in truc_lobby/config.py)."""
    purge_lobby_queue(redis_server.url)
    started = start_stack(redis_server.url, TRUC_BOT_WAIT_SECONDS="1", TRUC_MATCH_INTERVAL_MS="50")
    yield started
    started.stop()


def _found(pattern: str, text: str) -> re.Match[str]:
    match = re.search(pattern, text, re.MULTILINE)
    assert match is not None, f"no {pattern!r} in:\n{text}"
    return match


def _bot_seats(redis_url: str, game_id: str) -> dict[int, str]:
    """The seats the lobby handed to its bots in this game, {seat: player}, as the
    table of the ticket seated in it records them (the bots' jobs leave their
    stream when the match ends)."""
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        for key in client.scan_iter(match=ticket_key("*"), count=1000):
            if cast(str | None, client.hget(key, "g")) == game_id:
                table = json.loads(cast(str, client.hget(key, "t")))
                return {int(seat): player for seat, player, bot in table if bot}
    finally:
        client.close()
    raise AssertionError(f"no ticket was seated in {game_id}")


def _acted_by(event: game_pb2.Event) -> int | None:
    """The seat whose action produced this event, if it is an action's event (the
    pack is cut automatically: deck_cut is no seat's action here)."""
    kind = event.WhichOneof("kind")
    if kind in ("card_played", "called"):
        seat: int = getattr(event, kind).seat
        return seat
    if kind == "dealer_chosen" and event.dealer_chosen.HasField("seat"):
        return event.dealer_chosen.seat
    return None


@needs_node
def test_the_node_client_plays_its_seat_to_the_end_with_five_bots(
    bot_stack: Stack,
    redis_server: RedisServer,  # noqa: F811
) -> None:
    assert NODE is not None
    command = [
        NODE,
        str(CLIENT / "play.js"),
        *("--lobby", bot_stack.lobbies[0].address, "--game", bot_stack.game.address),
        *("--target-score", str(TARGET_SCORE), "--manches-to-win", "1"),
        # Pause before each action and end each WatchGame after 0.3 s: the match
        # then outlasts several streams, which the client must resume.
        *("--think-ms", "150", "--watch-seconds", "0.3"),
        # Act once on an outdated etag: ABORTED, read through ErrorInfo, re-read.
        "--stale-first",
        *("--timeout", "45"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=55, check=False)
    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    print(out[-400:])

    player = _found(r"^signed in as \S+: player (\S+)$", out)[1]
    seated = _found(r"^matched into (games/\S+): seat (\d)", out)
    name, seat = seated[1], int(seated[2])
    winner = _found(r"^result: team ([AB]) won the match", out)[1]
    assert "SubmitAction (" in out and ": ABORTED STALE_ETAG; re-reading the game" in out
    assert int(_found(r"(\d+) watch resumes", out)[1]) >= 1

    # The game as a spectator sees it: over, the Node player in its seat.
    view = (
        stub(bot_stack.game.address)
        .GetGame(
            game_service_pb2.GetGameRequest(name=name),
            metadata=auth("node-test-spectator", role="spectator"),
            timeout=10,
        )
        .game
    )
    assert view.finished and view.phase == game_pb2.PHASE_MATCH_OVER
    assert view.winner == (game_pb2.TEAM_A if winner == "A" else game_pb2.TEAM_B)
    assert view.options.target_score == TARGET_SCORE
    players = {s.seat: s.player for s in view.seats}
    assert players[seat] == player

    # The five other seats went to the lobby's bots.
    bots = _bot_seats(redis_server.url, name.removeprefix("games/"))
    assert sorted(bots) == sorted(set(range(6)) - {seat})
    assert all(players[s] == bot for s, bot in bots.items())

    # The Node player made every action it counted (each is one event naming its
    # seat), the server never had to play for it, and across the resumed streams
    # it narrated every trick exactly once.
    events = view.events
    actions = int(_found(r"(\d+) actions of mine", out)[1])
    assert actions == sum(_acted_by(event) == seat for event in events)
    assert not [e for e in events if e.HasField("turn_timed_out")]
    tricks = sum(e.HasField("trick_completed") for e in events)
    assert len(re.findall(r"^trick \d: ", out, re.MULTILINE)) == tricks


def test_the_vendored_google_rpc_protos_match_googleapis_common_protos() -> None:
    """clients/node/proto/google/rpc/ is a verbatim copy from the pinned Python package."""
    package = Path(next(iter(google.rpc.__path__)))
    for name in ("status.proto", "error_details.proto"):
        vendored = CLIENT / "proto" / "google" / "rpc" / name
        assert vendored.read_bytes() == (package / name).read_bytes(), (
            f"{vendored} differs from googleapis-common-protos' copy: copy it again"
        )
