"""The Node.js client (clients/node) plays over Play sessions, its default.

Its own tests (``node --test``, against a scripted Play service) cover what a
real service rarely does on cue: coalesced versions, each kind of refusal, a
stream broken between an action applied and its answer, a gap. Here it plays
real matches at real game services:

* two Node clients play a French Truc match over sessions, one acting first on
  an outdated etag, the other cutting its stream on every third answer and
  resending that action with its request id. The replica's metrics show every
  action came over a session (none through SubmitAction) and every resend was
  answered ``repeated``; each client received every version exactly once, in
  order (its ``--trace`` lines), with exactly the events its seat's GetGame
  lists.
* the same across two replicas, one of them SIGKILLed mid-match: both clients
  reopen their sessions on the other one and finish, nothing missed or twice.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator

import pytest
from truc.v1 import game_pb2, game_service_pb2

from tests.node.client import CLIENT, NODE, NodeClient, change, counters, needs_node
from tests.service.conftest import (  # noqa: F401
    Replica,
    auth,
    create_game,
    new_players,
    redis_server,
    stub,
)
from truc_dev_redis import RedisServer

FRENCH_TRUC = game_pb2.RuleOptions(rule_set=game_pb2.RULE_SET_FRENCH_TRUC, manches_to_win=1)
"""One game to 12: about 80 versions, a second or two."""

_TRACE = re.compile(r"^versions (\d+)-(\d+)(?: \(mine: \S+\))?: ?(.*)$", re.MULTILINE)


def _found(pattern: str, text: str) -> re.Match[str]:
    match = re.search(pattern, text, re.MULTILINE)
    assert match is not None, f"no {pattern!r} in:\n{text[-3000:]}"
    return match


def _check_every_version_once(out: str, view: game_pb2.GameView) -> dict[str, int]:
    """The client's --trace lines cover versions 1..the game's last, each exactly
    once and in order, and carry exactly the events the seat's own GetGame
    lists, in its order, each inside its message's versions. Returns the
    client's session summary as numbers."""
    ranges = [(int(m[1]), int(m[2]), m[3].split()) for m in _TRACE.finditer(out)]
    assert ranges, f"no --trace lines:\n{out[-2000:]}"
    expected_from = 1
    received: list[tuple[str, int]] = []
    for start, end, events in ranges:
        assert (start, start <= end) == (expected_from, True), f"versions {start}-{end}"
        for text in events:
            kind, version = text.split("@")
            assert start <= int(version) <= end, f"{text} in versions {start}-{end}"
            received.append((kind, int(version)))
        expected_from = end + 1
    assert expected_from - 1 == int(view.etag), "the last version received is the game's"
    assert received == [(e.WhichOneof("kind"), e.version) for e in view.events]
    summary = _found(
        r"^session: (\d+) messages for versions 1-(\d+) \((\d+) received, (\d+) coalesced\),"
        r" (\d+) resumes, (\d+) resent, (\d+) repeated, (\d+) refused, (\d+) settled$",
        out,
    )
    names = ("messages", "last", "received", "coalesced", "resumes", "resent", "repeated")
    numbers = dict(zip((*names, "refused", "settled"), map(int, summary.groups()), strict=True))
    assert numbers["messages"] == len(ranges) and numbers["last"] == int(view.etag)
    assert numbers["received"] == int(view.etag)
    assert numbers["coalesced"] == sum(start < end for start, end, _ in ranges)
    return numbers


def _acted_by(event: game_pb2.Event) -> int | None:
    """The seat whose action produced this event, if it is an action's event."""
    kind = event.WhichOneof("kind")
    if kind in ("card_played", "called"):
        seat: int = getattr(event, kind).seat
        return seat
    return None


def _seat_view(address: str, game: str, player: str) -> game_pb2.GameView:
    reply = stub(address).GetGame(
        game_service_pb2.GetGameRequest(name=game), metadata=auth(player), timeout=10
    )
    view: game_pb2.GameView = reply.game
    return view


def _check_match(
    outputs: list[str], address: str, game: str, players: list[str]
) -> list[dict[str, int]]:
    """Both clients saw the match end, every version once; each made the actions
    it counted (one event naming its seat each), none played by the server."""
    summaries = []
    winners = set()
    for seat, (out, player) in enumerate(zip(outputs, players, strict=True)):
        assert _found(r"I hold seat (\d) \(french_truc, 2 seats\)", out)[1] == str(seat)
        played = _found(r"^played in \S+ s \(transport (\w+)\): (\d+) actions of mine", out)
        assert played[1] == "session"
        view = _seat_view(address, game, player)
        assert view.finished and view.phase == game_pb2.PHASE_MATCH_OVER
        summary = _check_every_version_once(out, view)
        summary["actions"] = int(played[2])
        assert summary["actions"] == sum(_acted_by(e) == seat for e in view.events) > 0
        assert not [e for e in view.events if e.HasField("turn_timed_out")]
        winners.add(_found(r"^result: team ([AB]) won the match", out)[1])
        summaries.append(summary)
    assert len(winners) == 1
    return summaries


@pytest.fixture(scope="module")
def game_service(redis_server: RedisServer) -> Iterator[Replica]:  # noqa: F811
    started = Replica(redis_server.url)
    yield started
    started.stop()


@needs_node
def test_the_session_client_passes_its_own_tests() -> None:
    """node --test: the session client against a scripted Play service."""
    assert NODE is not None
    done = subprocess.run(
        [NODE, "--test", str(CLIENT / "test" / "session.test.js")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=CLIENT,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    tests = int(_found(r"^# tests (\d+)$", done.stdout)[1])
    assert tests >= 9 and _found(r"^# pass (\d+)$", done.stdout)[1] == str(tests)


@needs_node
def test_two_node_clients_play_a_match_over_sessions(game_service: Replica) -> None:
    players = new_players()[:2]
    created = create_game(stub(game_service.address), players, options=FRENCH_TRUC).game
    before = counters(game_service)
    clients = [
        # Seat 0 acts first on an outdated etag: refused STALE_ETAG on the stream.
        NodeClient([game_service.address], created.name, players[0], "--stale-first"),
        # Seat 1 cuts its stream as every third answer to its actions arrives,
        # reopens it after the last version it read and resends that action.
        NodeClient([game_service.address], created.name, players[1], "--drop-answers", "3"),
    ]
    outputs = [client.finish() for client in clients]
    print(outputs[1][-600:])
    delta = change(before, counters(game_service))

    first, second = _check_match(outputs, game_service.address, created.name, players)
    assert ": ABORTED STALE_ETAG; choosing again on the next version" in outputs[0]
    assert first["refused"] == 1 and first["resumes"] == 0
    assert second["resumes"] >= 5 and second["resent"] >= second["resumes"]
    assert "session dropped (cut on the answer to action 3, before reading it)" in outputs[1]
    # Every action came over a session, none through SubmitAction (a client
    # settles an action left unanswered at the match's end with SubmitAction and
    # its request id, which applies nothing). Every resend was of an action
    # applied already: answered `repeated` (unless the match ended first, then
    # settled), never applied again.
    assert delta["actions/session"] == first["actions"] + second["actions"], delta
    assert delta["actions/player"] == 0, delta
    resent = first["resent"] + second["resent"]
    settled = first["settled"] + second["settled"]
    assert resent - settled <= delta["messages/repeated"] <= resent, delta
    assert delta["messages/refused"] == 1, delta


@needs_node
def test_node_clients_resume_on_the_other_replica_when_one_is_killed(
    redis_server: RedisServer,  # noqa: F811
) -> None:
    replicas = [Replica(redis_server.url), Replica(redis_server.url)]
    try:
        doomed, survivor = replicas
        players = new_players()[:2]
        created = create_game(stub(survivor.address), players, options=FRENCH_TRUC).game
        # Both start on the doomed replica; a pause before each action keeps the
        # match going for a few seconds.
        addresses = [doomed.address, survivor.address]
        clients = [
            NodeClient(addresses, created.name, player, "--think-ms", "15") for player in players
        ]
        clients[0].wait_for_line(r"^-- hand 3 ", timeout=30)
        doomed.kill()
        outputs = [client.finish() for client in clients]
        print(outputs[0][-600:])

        summaries = _check_match(outputs, survivor.address, created.name, players)
        for out, summary in zip(outputs, summaries, strict=True):
            dropped = _found(r"^session dropped \((\w+)\): reopening after \S+ \d+ on (.+)", out)
            assert dropped.groups() == ("UNAVAILABLE", "replica 1")
            assert summary["resumes"] >= 1
        assert "hand 3 " in outputs[0].split("session dropped")[0]
    finally:
        for replica in replicas:
            replica.stop()
