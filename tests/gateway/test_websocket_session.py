"""The Play session as a WebSocket through the gateway (``GET /v1/games/{game}:play``),
with aiohttp's client as the browser: real Redis, game service and gateway
processes over sockets.

A whole match: two seats play over WebSockets (one with the token in the first
frame, as a browser must, one with the Authorization header), the four others
over gRPC Play sessions, a spectator watches over a WebSocket; every seat gets
every version once, in order; refused and malformed actions are answered on
the socket, which stays open; the spectator never sees a seat's hand. Then
the refusals: bad frames, missing or bad tokens, origins, the upgrade itself,
the open timeout, a client that stops answering pings, and the closes when
the game replica or the gateway stops."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import aiohttp
import grpc
import pytest
from google.protobuf import json_format
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from tests.observability.scrape import Samples
from tests.service.conftest import SECRET, Replica, wait_until
from truc_bots import HeuristicPolicy
from truc_service.tokens import issue_token

from .conftest import FRONT, MAX_BODY, Gateway, RestStack, call

OPTIONS = {"targetScore": 5, "manchesToWin": 1, "aceValue": 1}
LOBBY_TOKEN = issue_token(SECRET, "the-lobby", role="lobby", ttl_seconds=600)
SPECTATOR_TOKEN = issue_token(SECRET, "ws-spectator", role="spectator", ttl_seconds=600)
WS_SEATS = (0, 3)
"""Seat 0 sends its token in the first frame, seat 3 in the Authorization header."""
TIMEOUT = aiohttp.ClientTimeout(total=300)


def token(player: str) -> str:
    return issue_token(SECRET, player, ttl_seconds=600)


def cards_of(value: Any) -> list[tuple[str, str]]:
    """Every card (an object with a suit and a rank) anywhere in a JSON value."""
    if isinstance(value, dict):
        if set(value) == {"suit", "rank"}:
            return [(value["suit"], value["rank"])]
        return [c for v in value.values() for c in cards_of(v)]
    if isinstance(value, list):
        return [c for v in value for c in cards_of(v)]
    return []


def cards_under(value: Any, keys: frozenset[str]) -> list[tuple[str, str]]:
    """The cards anywhere under a field named in ``keys``."""
    if isinstance(value, dict):
        return [
            c
            for k, v in value.items()
            for c in (cards_of(v) if k in keys else cards_under(v, keys))
        ]
    if isinstance(value, list):
        return [c for v in value for c in cards_under(v, keys)]
    return []


def card_paths(value: Any, card: tuple[str, str], path: str = "") -> list[str]:
    """Where ``card`` is in a JSON value (for a failure's message)."""
    if isinstance(value, dict):
        if set(value) == {"suit", "rank"}:
            return [path] if (value["suit"], value["rank"]) == card else []
        return [p for k, v in value.items() for p in card_paths(v, card, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in card_paths(v, card, f"{path}[{i}]")]
    return []


HIDDEN_KEYS = frozenset({"hand", "dealt", "cardsDealt"})
"""Where a view carries the viewer's own cards."""
REVEALED_KEYS = frozenset({"shown", "draws", "drawCard", "cardPlayed"})
"""Where a frame carries cards everyone may know that a seat may hold: showdowns,
the draw, and a card played in a version that also deals the next hand (the
same card may be dealt again)."""


async def create_game(
    session: aiohttp.ClientSession, url: str, players: list[str], *, turn_seconds: int = 0
) -> str:
    body = {"players": players, "options": OPTIONS, "turnSeconds": turn_seconds}
    created = await call(session, "POST", f"{url}/v1/games", body, token=LOBBY_TOKEN)
    assert created.status == 200, created.body
    return str(created.body["name"])


# ----------------------------------------------------------------- the players


@dataclass
class Player:
    """What one session saw, and the seat's moves (the same for a WebSocket and gRPC)."""

    seat: int | None
    """None: a spectator."""
    policy: HeuristicPolicy = field(init=False)
    frames: list[dict[str, Any]] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)
    """Every version the session's updates covered (from fromVersion to version each)."""
    hands: dict[int, list[tuple[str, str]]] = field(default_factory=dict)
    refused: dict[str, dict[str, Any]] = field(default_factory=dict)
    final: dict[str, Any] = field(default_factory=dict)
    probes: list[str] = field(default_factory=list)
    """The request ids of the deliberately refused actions sent."""
    sent: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.policy = HeuristicPolicy(seed=7 if self.seat is None else self.seat)

    def on_frame(self, frame: dict[str, Any], *, probe: bool = False) -> list[dict[str, Any]]:
        """Record a PlayResponse (JSON); the action frames to send in answer."""
        self.frames.append(frame)
        if "refused" in frame:
            self.refused[frame["requestId"]] = frame["refused"]
            return []
        assert not frame["repeated"], frame  # nothing is ever sent twice here
        first, last = int(frame["fromVersion"]), int(frame["version"])
        assert first <= last, frame
        self.versions.extend(range(first, last + 1))
        assert all(first <= int(e["version"]) <= last for e in frame["events"]), frame
        view = frame["game"]
        if self.seat is None:
            return []
        assert view["seat"] == self.seat
        self.hands[last] = cards_of(view["hand"])
        if view["finished"] or view["phase"] in ("PHASE_NO_DEAL", "PHASE_MATCH_OVER"):
            self.final = view
            return []
        if view.get("toAct") != self.seat:
            return []
        answers = []
        if probe and not self.probes and any("playCard" in a for a in view["legalActions"]):
            # The game waits for this seat: a card it does not hold is refused
            # (CARD_NOT_IN_HAND, nothing changes), then it plays on.
            held = cards_of(view["hand"])
            suit, rank = next(
                (suit, rank)
                for suit in ("SUIT_SWORDS", "SUIT_CLUBS", "SUIT_COINS", "SUIT_CUPS")
                for rank in ("RANK_FOUR", "RANK_FIVE", "RANK_SIX", "RANK_SEVEN")
                if (suit, rank) not in held
            )
            self.probes.append(f"probe-{last}")
            card = {"playCard": {"suit": suit, "rank": rank}}
            answers.append(_action(card, view["etag"], self.probes[-1]))
        proto = json_format.ParseDict(view, game_pb2.GameView())
        request_id = uuid.uuid4().hex
        self.sent.add(request_id)
        action = json_format.MessageToDict(self.policy.choose(proto))
        return [*answers, _action(action, view["etag"], request_id)]


def _action(action: dict[str, Any], etag: str, request_id: str) -> dict[str, Any]:
    return {"action": {"action": action, "etag": etag, "requestId": request_id}}


async def _ws_player(
    session: aiohttp.ClientSession,
    url: str,
    name: str,
    player: Player,
    secret: str,
    *,
    header: bool,
    probe: bool = False,
) -> int | None:
    """Play (or watch) the whole match over a WebSocket; the close code."""
    headers = {"Authorization": "Bearer " + secret} if header else {}
    async with session.ws_connect(f"{url}/v1/{name}:play", headers=headers) as ws:
        if not header:
            await ws.send_str(json.dumps({"token": secret}))
        await ws.send_str(json.dumps({"open": {"afterVersion": "0"}}))
        if probe:  # a malformed action: answered refused by the gateway, the socket stays
            await ws.send_str('{"action": {"action": {"playCard": 7}, "requestId": "bad-1"}}')
        if player.seat is None:  # a spectator may not act: refused NOT_SEATED
            await ws.send_str(json.dumps(_action({"call": "CALL_PASS"}, "", "spectating")))
        async for message in ws:
            assert message.type is aiohttp.WSMsgType.TEXT, message
            for answer in player.on_frame(json.loads(message.data), probe=probe):
                await ws.send_str(json.dumps(answer))
        return ws.close_code


async def _grpc_player(address: str, name: str, player: Player, secret: str) -> grpc.StatusCode:
    """Play the whole match over a gRPC Play session; the stream's status."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = game_service_pb2_grpc.GameServiceStub(channel)
        stream = stub.Play(None, metadata=(("authorization", "Bearer " + secret),))
        await stream.write(
            game_service_pb2.PlayRequest(open=game_service_pb2.OpenSession(name=name))
        )
        while True:
            response = await stream.read()
            if response is grpc.aio.EOF:  # type: ignore[attr-defined]
                break
            frame = json_format.MessageToDict(
                cast(game_service_pb2.PlayResponse, response),
                always_print_fields_with_no_presence=True,
            )
            for answer in player.on_frame(frame):
                await stream.write(json_format.ParseDict(answer, game_service_pb2.PlayRequest()))
        return await stream.code()


# ----------------------------------------------------------------- the match


async def _match(stack: RestStack) -> None:
    url = stack.url
    tag = uuid.uuid4().hex[:8]
    players = [f"{tag}-ws{seat}" for seat in range(6)]
    async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
        name = await create_game(session, url, players)
        seats = [Player(seat) for seat in range(6)]
        spectator = Player(None)
        jobs: list[Any] = [
            _ws_player(session, url, name, spectator, SPECTATOR_TOKEN, header=False),
        ]
        for seat, player in enumerate(seats):
            secret = token(players[seat])
            if seat in WS_SEATS:
                jobs.append(
                    _ws_player(
                        session, url, name, player, secret, header=seat == 3, probe=seat == 0
                    )
                )
            else:
                jobs.append(_grpc_player(stack.services.game.address, name, player, secret))
        ends = await asyncio.gather(*jobs)
        # The game is over: a session opened after its last version ends at once, normally.
        last = max(seats[0].versions)
        late = await _session(
            f"{url}/v1/{name}:play",
            [json.dumps({"open": {"afterVersion": str(last)}})],
            headers={"Authorization": "Bearer " + token(players[3])},
        )
        assert (late.code, late.frames) == (1000, []), late

    # Every session ended normally after the match: 1000 on the sockets, OK on gRPC.
    assert ends == [1000] + [1000 if s in WS_SEATS else grpc.StatusCode.OK for s in range(6)], ends
    final = seats[0].final
    assert final["finished"] and final["winner"] in ("TEAM_A", "TEAM_B"), final
    last = max(seats[0].versions)
    for player in (*seats, spectator):
        # Every version once, in order, from the first: the WebSocket seats as the
        # gRPC ones (coalesced messages cover a range, still once each).
        assert player.versions == list(range(1, last + 1)), (player.seat, player.versions)
        if player.seat is not None:
            assert player.final["winner"] == final["winner"], player.final
    # Refused actions came back on the socket, which stayed open to the end.
    probe = seats[0]
    bad = probe.refused["bad-1"]
    assert (bad["code"], bad["reason"]) == (3, "BAD_REQUEST"), bad
    [probed] = probe.probes
    refusal = probe.refused[probed]
    assert refusal["reason"] == "CARD_NOT_IN_HAND", refusal
    at = next(i for i, f in enumerate(probe.frames) if f.get("requestId") == probed)
    assert probe.frames[at]["version"] == probed.removeprefix("probe-")  # nothing changed
    assert any("game" in f for f in probe.frames[at + 1 :])  # versions kept coming
    own_refusals = [r for rid, r in probe.refused.items() if rid in probe.sent]
    assert all(r["reason"] in ("STALE_ETAG", "CONFLICT") for r in own_refusals), own_refusals
    assert spectator.refused["spectating"]["reason"] == "NOT_SEATED"
    # The spectator's frames never carry a seat's hand.
    checked = 0
    for frame in spectator.frames:
        if "game" not in frame:
            continue
        assert "seat" not in frame["game"], frame["game"]
        assert not cards_under(frame, HIDDEN_KEYS), frame
        version = int(frame["version"])
        hands = [p.hands.get(version) for p in seats]
        if any(h is None for h in hands):
            continue  # a seat's session coalesced this version into a later one
        held = {c for h in hands for c in h or ()}
        leaked = (set(cards_of(frame)) & held) - set(cards_under(frame, REVEALED_KEYS))
        assert not leaked, (version, leaked, [card_paths(frame, c) for c in leaked])
        checked += 1
    assert checked > last // 2, (checked, last)


def test_seats_play_a_whole_match_over_websockets(rest_stack: RestStack) -> None:
    asyncio.run(_match(rest_stack))
    wait_until(
        lambda: rest_stack.gateway.health()["openStreams"] == 0,
        timeout=10,
        what="the gateway's sessions to close",
    )
    samples = Samples(str(rest_stack.gateway.metrics_url))
    assert samples.value("truc_gateway_websocket_sessions", route="Play") == 0
    # The spectator, the two seats and the late session closed normally.
    assert samples.value("truc_gateway_websocket_closes_total", route="Play", code="1000") >= 4
    sent = samples.value("truc_gateway_websocket_frames_total", route="Play", direction="sent")
    assert sent >= 3 * 20
    upstream = "truc_gateway_upstream_duration_seconds_count"
    assert samples.value(upstream, service="truc.v1.GameService", method="Play", code="OK") >= 4


# ----------------------------------------------------------------- refusals


@dataclass
class Closed:
    """What a socket received before it closed, and the close."""

    frames: list[Any]
    code: int | None
    reason: str

    @property
    def error(self) -> dict[str, Any]:
        """The last frame: the error frame."""
        frame = self.frames[-1]
        assert set(frame) == {"error", "httpStatus"}, frame
        error: dict[str, Any] = frame["error"]
        return error

    @property
    def error_reason(self) -> str:
        [info] = [d for d in self.error["details"] if d["@type"].endswith("ErrorInfo")]
        return str(info["reason"])


async def _until_closed(ws: aiohttp.ClientWebSocketResponse, timeout: float = 20) -> Closed:
    frames: list[Any] = []
    while True:
        message = await ws.receive(timeout=timeout)
        if message.type is aiohttp.WSMsgType.TEXT:
            frames.append(json.loads(message.data))
            continue
        assert message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED), message
        return Closed(frames, ws.close_code, str(message.extra or ""))


@pytest.fixture(scope="module")
def game(rest_stack: RestStack) -> Iterator[tuple[str, list[str]]]:
    """A game nobody plays (and no deadline moves): its name and players."""
    tag = uuid.uuid4().hex[:8]
    players = [f"{tag}-p{seat}" for seat in range(6)]

    async def made() -> str:
        async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
            return await create_game(session, rest_stack.url, players, turn_seconds=3600)

    yield asyncio.run(made()), players


async def _session(
    url: str,
    frames: Sequence[str | bytes],
    *,
    headers: dict[str, str] | None = None,
    read_first: bool = False,
) -> Closed:
    """Connect, send ``frames`` (after the first update if ``read_first``), read to the close."""
    async with (
        aiohttp.ClientSession(timeout=TIMEOUT) as session,
        session.ws_connect(url, headers=headers or {}) as ws,
    ):
        before: list[Any] = []
        for index, frame in enumerate(frames):
            if isinstance(frame, bytes):
                await ws.send_bytes(frame)
            else:
                await ws.send_str(frame)
            if read_first and index == 0:
                message = await ws.receive(timeout=20)
                assert message.type is aiohttp.WSMsgType.TEXT, message
                before.append(json.loads(message.data))
        closed = await _until_closed(ws)
        closed.frames[:0] = before
        return closed


OPEN = '{"open": {"afterVersion": "0"}}'


@pytest.mark.parametrize(
    ("frames", "close", "reason"),
    [
        (["not json"], 4400, "BAD_REQUEST"),
        (["[1, 2]"], 4400, "BAD_REQUEST"),
        (['{"opne": {}}'], 4400, "BAD_REQUEST"),  # an unknown field
        (['{"open": {"afterVersion": "x"}}'], 4400, "BAD_REQUEST"),  # a wrong type
        (['{"open": {}, "action": {}}'], 4400, "BAD_REQUEST"),  # both kinds
        (['{"action": {"requestId": "r"}}'], 4400, "BAD_REQUEST"),  # no open first
        (['{"open": {"name": "games/other"}}'], 4400, "BAD_REQUEST"),  # not the path's
        (['{"token": "t"}'], 4400, "BAD_REQUEST"),  # the header already brought one
        ([b'{"open": {}}'], 1003, "BAD_REQUEST"),  # binary
        ([OPEN, OPEN], 4400, "BAD_REQUEST"),  # opened twice
        ([OPEN, '{"action": {}, "x": 1}'], 4400, "BAD_REQUEST"),
        ([OPEN, '{"token": "t"}'], 4400, "BAD_REQUEST"),
    ],
)
def test_bad_frames_get_an_error_frame_and_a_close(
    rest_stack: RestStack,
    game: tuple[str, list[str]],
    frames: list[str | bytes],
    close: int,
    reason: str,
) -> None:
    name, players = game
    url = f"{rest_stack.url}/v1/{name}:play"
    headers = {"Authorization": "Bearer " + token(players[1])}
    closed = asyncio.run(_session(url, frames, headers=headers, read_first=frames[0] == OPEN))
    assert closed.code == close, closed
    assert closed.error_reason == reason, closed
    assert closed.error["code"] == 3 and closed.frames[-1]["httpStatus"] == 400
    assert closed.reason == reason
    if frames[0] == OPEN:  # the session had opened: its first update came first
        assert closed.frames[0]["version"] == "1" and closed.frames[0]["game"]["seat"] == 1


def test_a_bad_action_frame_is_refused_and_the_socket_stays_open(
    rest_stack: RestStack, game: tuple[str, list[str]]
) -> None:
    name, players = game

    async def scenario() -> None:
        async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
            headers = {"Authorization": "Bearer " + token(players[2])}
            async with session.ws_connect(
                f"{rest_stack.url}/v1/{name}:play", headers=headers
            ) as ws:
                await ws.send_str(OPEN)
                first = json.loads((await ws.receive(timeout=20)).data)
                assert first["version"] == "1"
                for frame, request_id in (
                    ('{"action": {"action": {"noSuchAction": 1}, "requestId": "u-1"}}', "u-1"),
                    ('{"action": {"action": {"call": "CALL_NOPE"}, "request_id": "u-2"}}', "u-2"),
                    ('{"action": {"etag": 12}}', ""),
                    ('{"action": {"action": {"call": "CALL_PASS"}, "requestId": "w-1"}}', "w-1"),
                ):
                    await ws.send_str(frame)
                    answer = json.loads((await ws.receive(timeout=20)).data)
                    assert answer["requestId"] == request_id and answer["version"] == "1", answer
                    assert "game" not in answer
                    if request_id == "w-1":  # well-formed: the service's own refusal
                        assert answer["refused"]["reason"] == "NOT_YOUR_TURN", answer
                    else:
                        assert answer["refused"]["code"] == 3, answer
                        assert answer["refused"]["reason"] == "BAD_REQUEST", answer
                assert not ws.closed
                await ws.close()

    asyncio.run(scenario())


def test_no_token_or_a_bad_token_is_refused(
    rest_stack: RestStack, game: tuple[str, list[str]]
) -> None:
    name, players = game
    url = f"{rest_stack.url}/v1/{name}:play"
    forged = issue_token("another-secret-0123456789abcdef-0123456789", players[0], ttl_seconds=60)
    expired = issue_token(SECRET, players[0], ttl_seconds=-60)
    cases: list[tuple[list[str | bytes], dict[str, str], str]] = [
        ([OPEN], {}, "TOKEN_MISSING"),  # neither the header nor a token frame
        ([json.dumps({"token": forged}), OPEN], {}, "TOKEN_INVALID"),
        ([json.dumps({"token": "not-a-jwt"}), OPEN], {}, "TOKEN_INVALID"),
        ([json.dumps({"token": "caf\u00e9"}), OPEN], {}, "TOKEN_INVALID"),  # not ASCII
        ([json.dumps({"token": expired}), OPEN], {}, "TOKEN_EXPIRED"),
        ([OPEN], {"Authorization": "Bearer " + forged}, "TOKEN_INVALID"),
    ]
    for frames, headers, reason in cases:
        closed = asyncio.run(_session(url, frames, headers=headers))
        assert closed.code == 4401, (frames, closed)
        assert closed.error_reason == reason, (frames, closed)
        assert closed.error["code"] == 16 and closed.frames[-1]["httpStatus"] == 401
        assert len(closed.frames) == 1  # nothing of the game
    # A malformed token frame is a bad frame.
    closed = asyncio.run(_session(url, ['{"token": 5}']))
    assert (closed.code, closed.error_reason) == (4400, "BAD_REQUEST")


def test_the_services_refusals_of_the_open_end_the_socket(
    rest_stack: RestStack, game: tuple[str, list[str]]
) -> None:
    name, _ = game
    outsider = {"Authorization": "Bearer " + token("nobody-here")}
    for path, headers, close, reason in (
        (f"/v1/{name}:play", outsider, 4403, "NOT_SEATED"),
        ("/v1/games/no-such-game:play", outsider, 4404, "GAME_NOT_FOUND"),
        ("/v1/games/bad%20name:play", outsider, 4400, "BAD_NAME"),
    ):
        closed = asyncio.run(_session(rest_stack.url + path, [OPEN], headers=headers))
        assert (closed.code, closed.error_reason, closed.reason) == (close, reason, reason), closed
        assert closed.frames[-1]["httpStatus"] == close - 4000


def test_the_upgrade_request_is_checked_before_the_upgrade(
    rest_stack: RestStack, game: tuple[str, list[str]]
) -> None:
    name, players = game
    url = f"{rest_stack.url}/v1/{name}:play"
    secret = token(players[0])

    async def scenario() -> None:
        async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
            plain = await call(session, "GET", url, token=secret)
            assert (plain.status, plain.reason) == (426, "UPGRADE_REQUIRED"), plain.body
            assert plain.headers["Upgrade"] == "websocket"
            posted = await call(session, "POST", url, {}, token=secret)
            assert (posted.status, posted.reason) == (405, "METHOD_NOT_ALLOWED")
            assert posted.headers["Allow"] == "GET, OPTIONS"
            queried = await call(session, "GET", url + "?access_token=" + secret)
            assert (queried.status, queried.reason) == (400, "BAD_REQUEST"), queried.body
            for query in ("?access_token=" + secret, "?afterVersion=0"):
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await session.ws_connect(url + query)
                assert refused.value.status == 400
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await session.ws_connect(url, origin="http://elsewhere.example")
            assert refused.value.status == 403
            evil = await call(session, "GET", url, headers={"Origin": "http://elsewhere.example"})
            assert (evil.status, evil.reason) == (403, "ORIGIN_NOT_ALLOWED")
            # The allowed origin, the gateway's own, and no origin at all upgrade.
            own = f"http://127.0.0.1:{rest_stack.gateway.port}"
            for origin in (FRONT, own, None):
                async with session.ws_connect(url, origin=origin) as ws:
                    await ws.send_str(json.dumps({"token": secret}))
                    await ws.send_str(OPEN)
                    first = json.loads((await ws.receive(timeout=20)).data)
                    assert first["game"]["seat"] == 0, first
            # A frame over the body limit: aiohttp closes 1009.
            async with session.ws_connect(url, headers={"Authorization": "Bearer " + secret}) as ws:
                await ws.send_str('{"open": {"name": "' + "x" * MAX_BODY + '"}}')
                closed = await _until_closed(ws)
                assert closed.code == 1009 and closed.frames == [], closed

    asyncio.run(scenario())


# ----------------------------------------------------------------- timeouts and stops


@pytest.fixture
def quick_gateway(rest_stack: RestStack) -> Iterator[Gateway]:
    """A gateway of its own (it is stopped by some tests) with short session timeouts."""
    gateway = Gateway(
        rest_stack.services.game.address,
        rest_stack.services.lobbies[0].address,
        TRUC_GATEWAY_WS_OPEN_TIMEOUT_MS="400",
        TRUC_GATEWAY_WS_PING_MS="400",
    )
    yield gateway
    code = gateway.stop()
    assert "Traceback" not in gateway.log(), gateway.log()
    assert code == 0, gateway.log()


def test_the_token_and_open_frames_must_come_in_time(
    quick_gateway: Gateway, game: tuple[str, list[str]]
) -> None:
    name, players = game
    url = f"{quick_gateway.url}/v1/{name}:play"
    for frames in ([], [json.dumps({"token": token(players[0])})]):
        closed = asyncio.run(_session(url, frames))
        assert (closed.code, closed.error_reason) == (4408, "OPEN_TIMEOUT"), closed
        assert closed.error["code"] == 4 and closed.frames[-1]["httpStatus"] == 408

    async def pinging() -> tuple[Closed, float]:
        """Pings (answered by the gateway) do not hold the deadline off."""
        async with (
            aiohttp.ClientSession(timeout=TIMEOUT) as session,
            session.ws_connect(url) as ws,
        ):
            start = asyncio.get_running_loop().time()

            async def ping() -> None:
                while True:
                    await ws.ping()
                    await asyncio.sleep(0.1)

            pinger = asyncio.create_task(ping())
            try:
                closed = await _until_closed(ws)
            finally:
                pinger.cancel()
            return closed, asyncio.get_running_loop().time() - start

    closed, seconds = asyncio.run(pinging())
    assert (closed.code, closed.error_reason) == (4408, "OPEN_TIMEOUT"), closed
    assert seconds < 2, seconds


def test_a_client_that_answers_no_ping_is_dropped_and_one_that_does_stays(
    quick_gateway: Gateway, game: tuple[str, list[str]]
) -> None:
    name, players = game
    url = f"{quick_gateway.url}/v1/{name}:play"
    headers = {"Authorization": "Bearer " + token(players[4])}

    async def scenario() -> None:
        async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
            async with session.ws_connect(url, headers=headers, autoping=False) as mute:
                await mute.send_str(OPEN)
                await asyncio.sleep(1.5)  # pings come and go unanswered
                seen = []
                while (message := await mute.receive(timeout=5)).type in (
                    aiohttp.WSMsgType.TEXT,
                    aiohttp.WSMsgType.PING,
                ):
                    seen.append(message.type)
                assert message.type is aiohttp.WSMsgType.CLOSED, message
                assert seen[0] is aiohttp.WSMsgType.TEXT and aiohttp.WSMsgType.PING in seen
            async with session.ws_connect(url, headers=headers, autoping=False) as alive:
                await alive.send_str(OPEN)
                first = await alive.receive(timeout=5)
                assert first.type is aiohttp.WSMsgType.TEXT
                pings = 0
                loop = asyncio.get_running_loop()
                until = loop.time() + 2.0
                while (left := until - loop.time()) > 0:
                    try:
                        message = await asyncio.wait_for(alive.receive(), left)
                    except TimeoutError:
                        break
                    assert message.type is aiohttp.WSMsgType.PING, message
                    pings += 1
                    await alive.pong(message.data)
                assert pings >= 3 and not alive.closed  # each answered: the socket stays

    asyncio.run(scenario())
    wait_until(lambda: quick_gateway.health()["openStreams"] == 0, timeout=5)


def test_the_gateway_stopping_closes_its_sockets_going_away(
    quick_gateway: Gateway, game: tuple[str, list[str]]
) -> None:
    name, players = game
    url = f"{quick_gateway.url}/v1/{name}:play"

    async def scenario() -> None:
        async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
            sockets = []
            for seat in (0, 1):
                ws = await session.ws_connect(url)
                await ws.send_str(json.dumps({"token": token(players[seat])}))
                await ws.send_str(OPEN)
                first = json.loads((await ws.receive(timeout=20)).data)
                assert first["game"]["seat"] == seat
                sockets.append(ws)
            stopped = asyncio.create_task(asyncio.to_thread(quick_gateway.stop))
            for ws in sockets:
                closed = await _until_closed(ws)
                assert (closed.code, closed.frames) == (1001, []), closed
            assert await stopped == 0

    asyncio.run(scenario())


def test_a_game_replica_stopping_ends_the_socket_with_its_status(
    rest_stack: RestStack, game: tuple[str, list[str]]
) -> None:
    name, players = game
    replica = Replica(rest_stack.services.redis_url)
    gateway = Gateway(replica.address, rest_stack.services.lobbies[0].address)
    url = f"{gateway.url}/v1/{name}:play"

    async def scenario() -> None:
        async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
            headers = {"Authorization": "Bearer " + token(players[5])}
            async with session.ws_connect(url, headers=headers) as ws:
                await ws.send_str(OPEN)
                first = json.loads((await ws.receive(timeout=20)).data)
                assert first["version"] == "1"
                stopped = asyncio.create_task(asyncio.to_thread(replica.stop))
                closed = await _until_closed(ws)
                await stopped
                # UNAVAILABLE: resume on another replica from the last version.
                assert (closed.code, closed.error["code"]) == (4503, 14), closed
                assert closed.frames[-1]["httpStatus"] == 503

    try:
        asyncio.run(scenario())
    finally:
        replica.stop()
        assert gateway.stop() == 0, gateway.log()
