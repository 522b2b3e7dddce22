"""The Node.js client (clients/node) plays one seat of a real match: it signs in
through a real lobby, is seated with five of the lobby's bots, and plays its seat
through the game service to the end, over a Play session (its default; Truc y
Flou) or SubmitAction and WatchGame (``--transport unary``; French Truc). What
it claims is checked independently, through a spectator's GetGame, the lobby's
bot jobs in Redis and the game service's counters of actions by origin.

It also plays French Truc (variants.md V2): two Node clients, each joining its
seat of a french_truc game created at a real game service, one over unary calls
and one over a session, play it to the end; a spectator's GetGame checks the
game (the piquet pack, both seats' actions, no turn played by the server).
tests/node/test_node_sessions.py covers the sessions themselves."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import google.rpc
import pytest
import redis
from truc.v1 import cards_pb2, game_pb2, game_service_pb2

from tests.lobby_service.aio_lobby import purge_lobby_queue
from tests.lobby_service.conftest import Stack, start_stack
from tests.node.client import CLIENT, NODE, change, counters, needs_node
from tests.service.conftest import (  # noqa: F401
    SECRET,
    Replica,
    auth,
    create_game,
    new_players,
    redis_server,
    stub,
)
from truc_dev_redis import RedisServer
from truc_lobby.store import ticket_key
from truc_service.tokens import issue_token

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
                # [seat, player, bot, display name]: the name is the newest field
                return {int(entry[0]): entry[1] for entry in table if entry[2]}
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


TABLES: dict[str, tuple[int, int]] = {
    "truc_y_flou": (6, game_pb2.RULE_SET_TRUC_Y_FLOU),
    "french_truc": (2, game_pb2.RULE_SET_FRENCH_TRUC),
}
"""Each rule set played through the lobby: its seats and its protocol value."""


@needs_node
@pytest.mark.parametrize(
    ("rule_set", "transport"), [("truc_y_flou", "session"), ("french_truc", "unary")]
)
def test_the_node_client_plays_its_seat_to_the_end_with_the_lobbys_bots(
    bot_stack: Stack,
    redis_server: RedisServer,  # noqa: F811
    rule_set: str,
    transport: str,
) -> None:
    """Truc y Flou with five bots, over a session; French Truc (variants.md V2)
    against one, over unary calls."""
    assert NODE is not None
    seats, proto_rule_set = TABLES[rule_set]
    command = [
        NODE,
        str(CLIENT / "play.js"),
        *("--lobby", bot_stack.lobbies[0].address, "--game", bot_stack.game.address),
        *("--rule-set", rule_set),
        *("--target-score", str(TARGET_SCORE), "--manches-to-win", "1"),
        # Pause before each action and end each Play or WatchGame stream after
        # 0.3 s: the match then outlasts several streams, which the client must
        # resume.
        *("--think-ms", "150", "--watch-seconds", "0.3"),
        # Act once on an outdated etag: ABORTED STALE_ETAG (a session's refusal,
        # or SubmitAction's ErrorInfo), then choose again.
        "--stale-first",
        *("--transport", transport),
        *("--timeout", "45"),
    ]
    before = counters(bot_stack.game)
    done = subprocess.run(command, capture_output=True, text=True, timeout=55, check=False)
    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    print(out[-400:])
    applied = change(before, counters(bot_stack.game))

    player = _found(r"^signed in as \S+: player (\S+)$", out)[1]
    seated = _found(r"^matched into (games/\S+): seat (\d)", out)
    name, seat = seated[1], int(seated[2])
    winner = _found(r"^result: team ([AB]) won the match", out)[1]
    played = _found(r"^played in \S+ s \(transport (\w+)\): (\d+) actions of mine", out)
    assert played[1] == transport
    actions = int(played[2])
    if transport == "session":
        assert "Play (" in out and ": ABORTED STALE_ETAG; choosing again on the next version" in out
        assert int(_found(r"(\d+) session resumes", out)[1]) >= 1
        # The bots play over sessions too: SubmitAction applied nothing.
        assert applied["actions/player"] == 0 and applied["actions/session"] > actions, applied
    else:
        assert "SubmitAction (" in out and ": ABORTED STALE_ETAG; re-reading the game" in out
        assert int(_found(r"(\d+) watch resumes", out)[1]) >= 1
        assert applied["actions/player"] == actions, applied

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
    assert view.rule_set == proto_rule_set and view.seat_count == seats
    assert _found(r"I hold seat \d \((\S+), (\d) seats\)", out).groups() == (rule_set, str(seats))
    players = {s.seat: s.player for s in view.seats}
    assert players[seat] == player

    # Every other seat went to the lobby's bots.
    bots = _bot_seats(redis_server.url, name.removeprefix("games/"))
    assert sorted(bots) == sorted(set(range(seats)) - {seat})
    assert all(players[s] == bot for s, bot in bots.items())

    # The Node player made every action it counted (each is one event naming its
    # seat), the server never had to play for it, and across the resumed streams
    # it narrated every trick exactly once.
    events = view.events
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


# --------------------------------------------------------------------------- french_truc

PIQUET_SUITS = {
    cards_pb2.SUIT_HEARTS,
    cards_pb2.SUIT_DIAMONDS,
    cards_pb2.SUIT_CLUBS,
    cards_pb2.SUIT_SPADES,
}
PIQUET_RANKS = {
    cards_pb2.RANK_SEVEN,
    cards_pb2.RANK_EIGHT,
    cards_pb2.RANK_NINE,
    cards_pb2.RANK_TEN,
    cards_pb2.RANK_JACK,
    cards_pb2.RANK_QUEEN,
    cards_pb2.RANK_KING,
    cards_pb2.RANK_ACE,
}
PIQUET_TEXT = r"[789TJQKA](?:He|Di|Cl|Sp)"


@pytest.fixture(scope="module")
def game_service(redis_server: RedisServer) -> Iterator[Replica]:  # noqa: F811
    started = Replica(redis_server.url)
    yield started
    started.stop()


@needs_node
def test_two_node_clients_play_a_french_truc_match_to_the_end(game_service: Replica) -> None:
    assert NODE is not None
    players = new_players()[:2]
    created = create_game(
        stub(game_service.address),
        players,
        options=game_pb2.RuleOptions(rule_set=game_pb2.RULE_SET_FRENCH_TRUC, manches_to_win=1),
    ).game
    assert created.rule_set == game_pb2.RULE_SET_FRENCH_TRUC and created.seat_count == 2
    clients = []
    for seat, player in enumerate(players):
        token = issue_token(SECRET, player, role="player", ttl_seconds=600)
        command = [
            NODE,
            str(CLIENT / "play.js"),
            *("--game", game_service.address, "--join", created.name, "--token", token),
            # One game to 12. Each pauses before acting; seat 0 plays over unary
            # calls, ends each WatchGame after 0.3 s and resumes it; seat 1 plays
            # over a session and acts once on an outdated etag (refused
            # ABORTED STALE_ETAG on the stream, then chooses again).
            *("--think-ms", "25"),
            *(
                ("--transport", "unary", "--watch-seconds", "0.3")
                if seat == 0
                else ("--stale-first",)
            ),
            *("--timeout", "45"),
        ]
        clients.append(
            subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        )
    outputs = []
    for client in clients:
        out, err = client.communicate(timeout=55)
        assert client.returncode == 0, out[-3000:] + err[-3000:]
        outputs.append(out)
    print(outputs[0][-400:])

    winners = set()
    actions = {}
    for seat, out in enumerate(outputs):
        assert _found(r"I hold seat (\d) \(french_truc, 2 seats\)", out)[1] == str(seat)
        hands = re.findall(
            rf"^my cards: ({PIQUET_TEXT}(?: {PIQUET_TEXT}){{2}})$", out, re.MULTILINE
        )
        assert hands, f"seat {seat} never printed a piquet hand:\n{out[-2000:]}"
        assert len(re.findall(r"^my cards: ", out, re.MULTILINE)) == len(hands)
        winners.add(_found(r"^result: team ([AB]) won the match", out)[1])
        actions[seat] = int(_found(r"(\d+) actions of mine", out)[1])
    assert len(winners) == 1, "both clients saw the same end"
    assert "pardes" not in "".join(outputs), "a tied trick is spoiled in french_truc"
    assert int(_found(r"(\d+) watch resumes", outputs[0])[1]) >= 1
    assert "(transport unary)" in outputs[0] and "(transport session)" in outputs[1]
    assert ": ABORTED STALE_ETAG; choosing again on the next version" in outputs[1]

    view = (
        stub(game_service.address)
        .GetGame(
            game_service_pb2.GetGameRequest(name=created.name),
            metadata=auth("node-test-spectator", role="spectator"),
            timeout=10,
        )
        .game
    )
    assert view.finished and view.phase == game_pb2.PHASE_MATCH_OVER
    assert view.rule_set == game_pb2.RULE_SET_FRENCH_TRUC and view.seat_count == 2
    assert view.winner == (game_pb2.TEAM_A if winners == {"A"} else game_pb2.TEAM_B)
    assert {s.seat: s.player for s in view.seats} == dict(enumerate(players))
    events = view.events
    assert not [e for e in events if e.HasField("turn_timed_out")]
    for seat in (0, 1):
        assert actions[seat] == sum(_acted_by(e) == seat for e in events) > 0
    played = [e.card_played.card for e in events if e.HasField("card_played")]
    assert played and all(c.suit in PIQUET_SUITS and c.rank in PIQUET_RANKS for c in played)
    tricks = sum(e.HasField("trick_completed") for e in events)
    assert len(re.findall(r"^trick \d: ", outputs[0], re.MULTILINE)) == tricks
