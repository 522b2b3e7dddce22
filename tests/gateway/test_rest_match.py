"""A whole match over REST and Server-Sent Events: six HTTP clients sign in,
queue through the lobby, learn their seats from a ticket's SSE stream, follow
the game with SSE and play with ``:submitAction``; one extra watcher is cut
again and again mid-game and resumes with ``Last-Event-ID``."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import aiohttp
from google.protobuf import json_format
from truc.v1 import game_pb2

from tests.service.conftest import wait_until
from truc_bots import HeuristicPolicy

from .conftest import Event, RestStack, call, sse

# Options no other test asks for, so the six tickets only match each other; a short match.
OPTIONS = {"targetScore": 7, "manchesToWin": 1, "aceValue": 1}
CUT_EVERY = 7


async def _seat(session: aiohttp.ClientSession, url: str, name: str) -> dict[str, Any]:
    """Sign in, queue, and follow the ticket (SSE) until it is matched."""
    guest = await call(session, "POST", f"{url}/v1/guests:signIn", {"displayName": name})
    assert guest.status == 200, guest.body
    token = guest.body["token"]
    created = await call(session, "POST", f"{url}/v1/tickets", {"options": OPTIONS}, token=token)
    assert created.status == 200, created.body
    ticket: dict[str, Any] = created.body["ticket"]
    assert ticket["state"] == "TICKET_STATE_QUEUED"
    states = []
    async with sse(session, f"{url}/v1/{ticket['name']}:watch", token=token) as stream:
        async for event in stream:
            if event.event == "end":
                break
            assert event.event == "message", event
            assert event.id is None  # tickets have no version: a reconnect starts afresh
            states.append(event.data["ticket"]["state"])
            ticket = event.data["ticket"]
    assert states[-1] == "TICKET_STATE_MATCHED", states
    return ticket


async def _play(
    session: aiohttp.ClientSession, url: str, ticket: dict[str, Any], refused: list[str]
) -> tuple[list[Event], dict[str, Any]]:
    """Follow the game by SSE and act whenever the view says it is this seat's turn."""
    seat, token, game = ticket["seat"], ticket["gameToken"], ticket["game"]
    policy = HeuristicPolicy(seed=seat)
    events: list[Event] = []
    final: dict[str, Any] = {}
    async with sse(session, f"{url}/v1/{game}:watch", token=token) as stream:
        async for event in stream:
            if event.event == "end":
                return events, final
            assert event.event == "message", event.data
            events.append(event)
            view = event.data["game"]
            assert view["seat"] == seat
            if view["finished"]:
                final = view
                continue
            to_act = view.get("toAct")
            if to_act is None:
                continue
            if not refused and seat == (to_act + 1) % 6:
                wrong = await call(
                    session,
                    "POST",
                    f"{url}/v1/{game}:submitAction",
                    {"action": {"call": "CALL_PASS"}},
                    token=token,
                )
                refused.append(f"{wrong.status} {wrong.reason}")
            if to_act != seat:
                continue
            proto = json_format.ParseDict(view, game_pb2.GameView())
            action = json_format.MessageToDict(policy.choose(proto))
            reply = await call(
                session,
                "POST",
                f"{url}/v1/{game}:submitAction",
                {"action": action, "etag": view["etag"], "requestId": uuid.uuid4().hex},
                token=token,
            )
            if reply.status == 409:  # a newer version is on its way: act on that one
                assert reply.reason in ("STALE_ETAG", "CONFLICT"), reply.body
                continue
            assert reply.status == 200, reply.body
            assert reply.body["game"]["seat"] == seat
    raise AssertionError("the stream closed without an end event")


async def _cut_watcher(
    session: aiohttp.ClientSession, url: str, ticket: dict[str, Any]
) -> tuple[list[Event], int]:
    """Watch the game, dropping the connection every CUT_EVERY events and resuming
    with Last-Event-ID; how many connections it took."""
    events: list[Event] = []
    last: str | None = None
    connections = 0
    while True:
        connections += 1
        async with sse(
            session,
            f"{url}/v1/{ticket['game']}:watch",
            token=ticket["gameToken"],
            last_event_id=last,
        ) as stream:
            seen = 0
            async for event in stream:
                if event.event == "end":
                    return events, connections
                events.append(event)
                last = event.id
                seen += 1
                if seen == CUT_EVERY:
                    break  # drop the connection mid-game


async def _match(stack: RestStack) -> None:
    url = stack.url
    timeout = aiohttp.ClientTimeout(total=240)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        tickets = await asyncio.gather(*(_seat(session, url, f"web{i}") for i in range(6)))
        games = {t["game"] for t in tickets}
        assert len(games) == 1, games
        assert sorted(t["seat"] for t in tickets) == list(range(6))
        refused: list[str] = []
        watched = next(t for t in tickets if t["seat"] == 3)
        cut = asyncio.create_task(_cut_watcher(session, url, watched))
        results = await asyncio.gather(*(_play(session, url, t, refused) for t in tickets))
        cut_events, connections = await cut

    assert refused == ["400 NOT_YOUR_TURN"]
    finals = [final for _, final in results]
    assert all(f["finished"] for f in finals), finals
    assert len({f["winner"] for f in finals}) == 1
    assert finals[0]["winner"] in ("TEAM_A", "TEAM_B")
    # Every seat saw every version once, in order, from the first.
    ids = [[int(e.id or 0) for e in events] for events, _ in results]
    assert ids[0] == list(range(1, len(ids[0]) + 1)), ids[0]
    assert all(i == ids[0] for i in ids)
    # The watcher that was cut again and again saw exactly what seat 3 saw.
    seat3 = next(events for (events, _), t in zip(results, tickets, strict=True) if t["seat"] == 3)
    assert connections > 3
    assert [e.id for e in cut_events] == [e.id for e in seat3]
    assert [e.data for e in cut_events] == [e.data for e in seat3]


def test_six_http_clients_play_a_match_through_the_lobby(rest_stack: RestStack) -> None:
    asyncio.run(_match(rest_stack))
    # Every SSE client has gone: the gateway cancelled each of their gRPC streams.
    wait_until(
        lambda: rest_stack.gateway.health()["openStreams"] == 0,
        timeout=10,
        what="the gateway's streams to close",
    )
