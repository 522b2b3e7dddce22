"""Play sessions against real game-service replicas on a real Redis."""

from __future__ import annotations

import asyncio
import uuid

import grpc
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from .conftest import (
    LOBBY,
    Metadata,
    Replica,
    auth,
    create_fixed_game,
    create_game,
    new_players,
    stub,
    view_of,
)
from .sessions import Player, Seen, action_request, open_request, play, receive


def _contiguous(seen: Seen, final: int) -> None:
    """Every version after the first, exactly once, in order."""
    assert seen.versions == list(range(seen.versions[0], final + 1)), seen.versions[:20]
    assert seen.event_versions == sorted(seen.event_versions)


async def _match(
    replicas: list[Replica], *, cut: dict[int, int] | None = None
) -> tuple[str, list[Player], Player]:
    players = new_players()
    created = create_game(stub(replicas[0].address), players)
    name = created.name
    addresses = [r.address for r in replicas]
    seats = [
        Player(
            name,
            auth(player),
            addresses[seat % 2 :] + addresses[: seat % 2],
            seat=seat,
            seed=seat,
        )
        for seat, player in enumerate(players)
    ]
    for seat, after in (cut or {}).items():
        seats[seat].cut_after = after
        seats[seat].resend_after_cut = True
    spectator = Player(name, auth("watcher", role="spectator"), addresses[1:], seat=None, seed=9)
    await asyncio.gather(*(p.run() for p in [*seats, spectator]))
    return name, seats, spectator


def test_six_sessions_on_two_replicas_play_a_match(replicas: list[Replica]) -> None:
    _, seats, spectator = asyncio.run(_match(replicas))
    final = seats[0].seen.last
    assert final is not None and final.finished
    last_version = int(final.etag)
    for player in [*seats, spectator]:
        seen = player.seen
        assert seen.last is not None and seen.last.finished
        _contiguous(seen, last_version)
        assert not seen.refused, seen.refused[:3]
    # every version after the first came from one seat's action (no timer ran),
    # and that seat's session was told so with its request id
    own = sorted(v for p in seats for v in p.seen.own.values())
    assert own == list(range(2, last_version + 1))
    for message in spectator.seen.messages:
        assert not message.game.hand and not message.game.legal_actions


def test_a_cut_session_resumes_and_its_action_is_applied_once(replicas: list[Replica]) -> None:
    _, seats, spectator = asyncio.run(_match(replicas, cut={0: 3, 3: 5}))
    final = seats[0].seen.last
    assert final is not None and final.finished
    for player in [*seats, spectator]:
        _contiguous(player.seen, int(final.etag))
    assert seats[0].seen.streams >= 2 and seats[3].seen.streams >= 2
    own = sorted(v for p in seats for v in p.seen.own.values())
    assert own == list(range(2, int(final.etag) + 1))


async def _open(
    address: str, metadata: Metadata, *requests: game_service_pb2.PlayRequest
) -> list[game_service_pb2.PlayResponse]:
    async with grpc.aio.insecure_channel(address) as channel:
        call = play(channel, metadata)
        for request in requests:
            await call.write(request)
        out = []
        for _ in range(len(requests) + 1):
            message = await receive(call)
            if message is None:
                break
            out.append(message)
        call.cancel()
        return out


def test_refused_actions_keep_the_session_open(replicas: list[Replica]) -> None:
    players = new_players()
    name = create_fixed_game(stub(replicas[0].address), players).name  # seat 0 leads

    async def run() -> list[game_service_pb2.PlayResponse | None]:
        async with grpc.aio.insecure_channel(replicas[1].address) as channel:
            call = play(channel, auth(players[1]))
            await call.write(open_request(name, 0))
            out = [await receive(call)]
            await call.write(action_request(game_pb2.Action(), "bad-1"))
            out.append(await receive(call))
            assert out[0] is not None
            card = out[0].game.hand[0]
            await call.write(action_request(game_pb2.Action(play_card=card), "early-1"))
            out.append(await receive(call))
            await call.write(action_request(game_pb2.Action(play_card=card), "stale-1", etag="0"))
            out.append(await receive(call))
            call.cancel()
            return out

    first, bad, early, stale = [m for m in asyncio.run(run()) if m is not None]
    assert first.version == 1 and first.from_version == 1 and first.game.hand
    assert bad.refused.reason == "BAD_ACTION" and bad.request_id == "bad-1"
    assert bad.refused.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert early.refused.reason == "NOT_YOUR_TURN" and early.request_id == "early-1"
    assert early.refused.code == grpc.StatusCode.FAILED_PRECONDITION.value[0]
    assert stale.refused.reason == "STALE_ETAG" and stale.version == 1
    after = view_of(stub(replicas[0].address), name, auth(players[1]))
    assert after.etag == "1"  # nothing changed


def test_open_errors_end_the_stream(replicas: list[Replica]) -> None:
    players = new_players()
    name = create_game(stub(replicas[0].address), players).name
    address = replicas[0].address

    def code_of(metadata: Metadata, *requests: game_service_pb2.PlayRequest) -> str:
        try:
            asyncio.run(_open(address, metadata, *requests))
        except grpc.aio.AioRpcError as error:
            return error.code().name
        return "OK"

    assert code_of(auth("stranger"), open_request(name, 0)) == "PERMISSION_DENIED"
    assert code_of((), open_request(name, 0)) == "UNAUTHENTICATED"
    assert code_of(auth(players[0]), open_request("games/nope-" + uuid.uuid4().hex, 0)) == (
        "NOT_FOUND"
    )
    assert code_of(auth(players[0]), open_request("bad name", 0)) == "INVALID_ARGUMENT"
    assert code_of(auth(players[0]), open_request(name, 99)) == "OUT_OF_RANGE"
    assert code_of(
        auth(players[0]), action_request(game_service_pb2.SessionAction().action, "x")
    ) == ("INVALID_ARGUMENT")
    assert code_of(LOBBY, open_request(name, 0), open_request(name, 0)) == "INVALID_ARGUMENT"


def test_a_replica_killed_mid_match_loses_nothing(redis_server: object) -> None:
    """Six seats and a spectator on two replicas; one is SIGKILLed mid-match and
    a third takes its place: every session resumes (on the survivor) with every
    version exactly once, in order, and the match finishes."""
    url = redis_server.url  # type: ignore[attr-defined]
    doomed, survivor = Replica(url), Replica(url)
    try:

        async def run() -> tuple[list[Player], Player]:
            players = new_players()
            name = create_game(stub(survivor.address), players).name
            both = [doomed.address, survivor.address]
            seats = [
                Player(name, auth(p), both, seat=s, seed=100 + s) for s, p in enumerate(players)
            ]
            spectator = Player(name, auth("w", role="spectator"), both, seat=None, seed=7)
            runs = asyncio.gather(*(p.run() for p in [*seats, spectator]))
            while seats[0].after < 4:  # early: every session is still on its first stream
                await asyncio.sleep(0.002)
            doomed.kill()
            await runs
            return seats, spectator

        seats, spectator = asyncio.run(run())
    finally:
        doomed.stop()
        survivor.stop()
    final = seats[0].seen.last
    assert final is not None and final.finished
    for player in [*seats, spectator]:
        _contiguous(player.seen, int(final.etag))
        assert player.seen.streams >= 2, player.seat  # every session started on the killed one
    own = sorted(v for p in seats for v in p.seen.own.values())
    missing = sorted(set(range(2, int(final.etag) + 1)) - set(own))
    unanswered = [(p.seat, p.unanswered) for p in seats if p.unanswered]
    assert own == list(range(2, int(final.etag) + 1)), (missing, unanswered)


def test_a_session_that_stops_reading_gets_its_versions_coalesced(
    replicas: list[Replica],
) -> None:
    players = new_players()
    name = create_fixed_game(stub(replicas[0].address), players).name  # one hand
    addresses = [r.address for r in replicas]
    seat_view = view_of(stub(addresses[0]), name, auth(players[0]))
    signal = next(a for a in seat_view.legal_actions if a.WhichOneof("kind") == "signal")

    async def run() -> tuple[list[game_service_pb2.PlayResponse | None], list[Player]]:
        # A small HTTP/2 window (and no BDP probing to grow it): the server can
        # write only a few messages ahead of a client that does not read.
        options = [("grpc.http2.lookahead_bytes", 4096), ("grpc.http2.bdp_probe", 0)]
        async with grpc.aio.insecure_channel(addresses[0], options=options) as channel:
            call = play(channel, auth("slow", role="spectator"))
            await call.write(open_request(name, 0))
            first = [await receive(call)]
            # Versions the slow session does not read: team signals (each a version).
            client = game_service_pb2_grpc.GameServiceStub(channel)
            for _ in range(60):
                await client.SubmitAction(
                    game_service_pb2.SubmitActionRequest(
                        name=name,
                        action=signal,
                        response_view=game_service_pb2.RESPONSE_VIEW_MINIMAL,
                    ),
                    metadata=auth(players[0]),
                )
            seats = [
                Player(name, auth(p), addresses, seat=s, seed=s) for s, p in enumerate(players)
            ]
            await asyncio.gather(*(p.run() for p in seats))  # the whole match, unread
            while (message := await receive(call)) is not None:
                first.append(message)
            return first, seats

    received, seats = asyncio.run(run())
    messages = [m for m in received if m is not None]
    final = seats[0].seen.last
    assert final is not None and final.phase == game_pb2.PHASE_NO_DEAL  # its one deal played
    covered = [v for m in messages for v in range(m.from_version, m.version + 1)]
    assert covered == list(range(1, int(final.etag) + 1))
    assert len(messages) < len(covered)  # some versions came coalesced
    assert any(m.from_version < m.version for m in messages)
    assert messages[-1].game.phase == game_pb2.PHASE_NO_DEAL


def test_a_stopping_replica_ends_its_sessions_at_once(redis_server: object) -> None:
    """SIGTERM: the sessions end UNAVAILABLE when the replica starts stopping, not
    when its grace runs out, so their clients resume elsewhere at once."""
    url = redis_server.url  # type: ignore[attr-defined]
    replica = Replica(url, TRUC_GRACE_SECONDS="10")
    players = new_players()
    name = create_game(stub(replica.address), players).name

    async def run() -> tuple[str, float]:
        async with grpc.aio.insecure_channel(replica.address) as channel:
            call = play(channel, auth(players[0]))
            await call.write(open_request(name, 0))
            assert await receive(call) is not None
            began = asyncio.get_running_loop().time()
            replica.process.terminate()
            try:
                await receive(call, 8.0)
            except grpc.aio.AioRpcError as error:
                return error.code().name, asyncio.get_running_loop().time() - began
            return "OK", asyncio.get_running_loop().time() - began

    try:
        code, took = asyncio.run(run())
    finally:
        replica.stop()
    assert code == "UNAVAILABLE"
    assert took < 3.0, f"the session ended {took:.1f} s after SIGTERM (grace 10 s)"


def test_a_session_s_actions_are_rate_limited_by_the_commit(redis_server: object) -> None:
    """The limit is counted in the one script a session's action costs: past it,
    the action is refused RESOURCE_EXHAUSTED RATE_LIMITED with its retry delay,
    nothing is applied, and the session stays open."""
    url = redis_server.url  # type: ignore[attr-defined]
    replica = Replica(url, TRUC_RATE_SIGNALS="3", TRUC_RATE_WINDOW_MS="60000")
    try:
        players = new_players()
        name = create_fixed_game(stub(replica.address), players).name
        seat_view = view_of(stub(replica.address), name, auth(players[0]))
        signal = next(a for a in seat_view.legal_actions if a.WhichOneof("kind") == "signal")

        async def run() -> list[game_service_pb2.PlayResponse]:
            async with grpc.aio.insecure_channel(replica.address) as channel:
                call = play(channel, auth(players[0]))
                await call.write(open_request(name, 0))
                out = [m for m in [await receive(call)] if m is not None]
                for number in range(5):
                    await call.write(action_request(signal, f"signal-{number}"))
                    message = await receive(call)
                    assert message is not None
                    out.append(message)
                call.cancel()
                return out

        messages = asyncio.run(run())
        final = view_of(stub(replica.address), name, auth(players[0]))
    finally:
        replica.stop()
    applied = [m for m in messages[1:] if not m.HasField("refused")]
    refused = [m for m in messages[1:] if m.HasField("refused")]
    assert [m.request_id for m in applied] == ["signal-0", "signal-1", "signal-2"]
    assert [m.request_id for m in refused] == ["signal-3", "signal-4"]
    for message in refused:
        assert message.refused.reason == "RATE_LIMITED"
        assert message.refused.code == grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]
        assert 0 < int(message.refused.metadata["retry_after_ms"]) <= 60000
    assert final.etag == "4"  # version 1 and three signals
