"""Strict JSON at the gateway (issue 14, finding 4): an enum field accepts its
value's name or a JSON integer that is one of its numbers, nothing else; an
integer field no fraction. A refusal is 400 BAD_REQUEST naming the field, and
changes nothing: the 2 of coins that ``{"suit": 3.7, "rank": 2.4}`` used to
play stays in the hand. The same for REST bodies, query parameters and the
WebSocket session's action frames. Real Redis, game service, lobby and gateway
processes."""

from __future__ import annotations

import json
import uuid
from typing import Any

import aiohttp

from tests.service.conftest import new_players

from .conftest import RestStack, call
from .test_errors import create_game, run, token

TWO_OF_COINS = {"suit": "SUIT_COINS", "rank": "RANK_TWO"}
"""In seat 0's hand (tests.service.conftest.TRUC_REFUSED_DEAL), who leads."""


def _play(card: dict[str, Any]) -> dict[str, Any]:
    return {"action": {"playCard": card}, "requestId": uuid.uuid4().hex}


async def _version(session: aiohttp.ClientSession, url: str, name: str, player: str) -> int:
    got = await call(session, "GET", f"{url}/v1/{name}", token=token(player))
    assert got.status == 200, got.body
    return int(got.body["game"]["etag"])


def test_an_enum_takes_its_name_or_a_defined_integer_and_nothing_else(
    rest_stack: RestStack,
) -> None:
    url = rest_stack.url

    async def check(session: aiohttp.ClientSession) -> None:
        players = new_players()
        name = await create_game(session, url, players)
        act = f"{url}/v1/{name}:submitAction"
        before = await _version(session, url, name, players[0])
        refused: list[tuple[dict[str, Any], str]] = [
            (_play({"suit": 3.7, "rank": 2.4}), "action.playCard.suit"),  # the issue's
            (_play({"suit": 3.0, "rank": 2}), "action.playCard.suit"),  # a float, even whole
            (_play({"suit": True, "rank": 2}), "action.playCard.suit"),  # a bool
            (_play({"suit": "3", "rank": 2}), "action.playCard.suit"),  # digits in a string
            (_play({"suit": 99, "rank": 2}), "action.playCard.suit"),  # no such value
            (_play({"suit": "SUIT_COINS", "rank": 2.4}), "action.playCard.rank"),
            (_play({"suit": "SUIT_COINS", "rank": [2]}), "action.playCard.rank"),
            (_play({"suit": "SUIT_COINS", "rank": None, "x": 1}), "action.playCard.x"),
            ({**_play(TWO_OF_COINS), "responseView": 1.5}, "responseView"),
            ({**_play(TWO_OF_COINS), "response_view": "1"}, "response_view"),
            ({"action": {"call": 5.5}}, "action.call"),
            ({"action": {"play_card": {"suit": 3.7}}}, "action.play_card.suit"),  # proto names
        ]
        for body, field in refused:
            reply = await call(session, "POST", act, body, token=token(players[0]))
            assert (reply.status, reply.reason) == (400, "BAD_REQUEST"), (body, reply.body)
            assert reply.body["code"] == 3
            assert f"body: {field}: " in reply.body["message"], (field, reply.body["message"])
        # Nothing was played: the version is the same and the 2 of coins is still held.
        assert await _version(session, url, name, players[0]) == before
        got = await call(session, "GET", f"{url}/v1/{name}", token=token(players[0]))
        assert TWO_OF_COINS in got.body["game"]["hand"], got.body["game"]["hand"]

        # A defined number as a JSON integer is that value (proto3 JSON).
        played = await call(
            session, "POST", act, _play({"suit": 3, "rank": 2}), token=token(players[0])
        )
        assert played.status == 200, played.body
        assert played.body["game"]["etag"] == str(before + 1)
        assert TWO_OF_COINS not in played.body["game"]["hand"]

    run(check)


def test_integers_take_no_fraction_and_query_enums_are_names_or_digits(
    rest_stack: RestStack,
) -> None:
    url = rest_stack.url

    async def check(session: aiohttp.ClientSession) -> None:
        guest = await call(session, "POST", f"{url}/v1/guests:signIn", {"displayName": "s"})
        me = guest.body["token"]
        tickets = f"{url}/v1/tickets"
        for body, field in (
            ({"options": {"targetScore": 2.5}}, "options.targetScore"),
            ({"options": {"targetScore": "2.5"}}, "options.targetScore"),
            ({"options": {"targetScore": True}}, "options.targetScore"),
            ({"options": {"targetScore": 1e30}}, "options.targetScore"),  # out of range
            ({"options": {"ruleSet": 1.0}}, "options.ruleSet"),
            ({"party": [None]}, "party[0]"),
            ({"party": [5]}, "party[0]"),
        ):
            reply = await call(session, "POST", tickets, body, token=me)
            assert (reply.status, reply.reason) == (400, "BAD_REQUEST"), (body, reply.body)
            assert f"body: {field}" in reply.body["message"], (field, reply.body["message"])

        games = f"{url}/v1/games"
        for query, field in (
            ("rule_set=1.5", "rule_set"),
            ("rule_set=true", "rule_set"),
            ("rule_set=99", "rule_set"),
            ("page_size=2.5", "page_size"),
            ("pageSize=1e3", "page_size"),
        ):
            reply = await call(session, "GET", f"{games}?{query}", token=me)
            assert (reply.status, reply.reason) == (400, "BAD_REQUEST"), (query, reply.body)
            assert f"query: {field}: " in reply.body["message"], (query, reply.body["message"])
        # In a query an enum is its name or its number's digits; an integer its digits.
        for query in ("rule_set=RULE_SET_TRUC_Y_FLOU", "rule_set=1", "page_size=3"):
            reply = await call(session, "GET", f"{games}?{query}", token=me)
            assert reply.status == 200, (query, reply.body)

    run(check)


def test_a_websocket_action_frame_is_read_as_strictly(rest_stack: RestStack) -> None:
    url = rest_stack.url

    async def check(session: aiohttp.ClientSession) -> None:
        players = new_players()
        name = await create_game(session, url, players)
        headers = {"Authorization": "Bearer " + token(players[0])}
        async with session.ws_connect(f"{url}/v1/{name}:play", headers=headers) as ws:
            await ws.send_str('{"open": {"afterVersion": "0"}}')
            first = json.loads((await ws.receive(timeout=20)).data)
            version = first["version"]
            for card, field in (
                ({"suit": 3.7, "rank": 2.4}, "action.action.playCard.suit"),
                ({"suit": "SUIT_COINS", "rank": True}, "action.action.playCard.rank"),
            ):
                frame = {"action": {"action": {"playCard": card}, "requestId": "bad-1"}}
                await ws.send_str(json.dumps(frame))
                answer = json.loads((await ws.receive(timeout=20)).data)
                assert answer["refused"]["reason"] == "BAD_REQUEST", answer
                assert f"{field}: " in answer["refused"]["message"], answer
                assert answer["version"] == version and "game" not in answer, answer
            # The socket is still open and the card still held: a good frame plays it.
            good = {"action": {"action": {"playCard": TWO_OF_COINS}, "requestId": "ok-1"}}
            await ws.send_str(json.dumps(good))
            played = json.loads((await ws.receive(timeout=20)).data)
            assert "refused" not in played, played
            assert int(played["version"]) == int(version) + 1
            await ws.close()

    run(check)
