"""The rule sets of variants.md over REST: a French Truc game created and played
to the end through the gateway (the proto3 JSON mapping: enum values by name,
French cards, the new calls and view fields), its Server-Sent Events stream, and
the refusals a game of another pack or rule set gives in JSON."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from tests.service.conftest import SECRET
from truc_service.tokens import issue_token

from .conftest import RestStack, call, sse

LOBBY_TOKEN = issue_token(SECRET, "the-lobby", role="lobby", ttl_seconds=600)
FRENCH_RANKS = {"RANK_SEVEN", "RANK_EIGHT", "RANK_NINE", "RANK_TEN", "RANK_JACK"}
FRENCH_RANKS |= {"RANK_QUEEN", "RANK_KING", "RANK_ACE"}
FRENCH_SUITS = {"SUIT_HEARTS", "SUIT_DIAMONDS", "SUIT_CLUBS", "SUIT_SPADES"}


def token(player: str) -> str:
    return issue_token(SECRET, player, ttl_seconds=600)


def card(text: str) -> dict[str, str]:
    """'7He' -> the JSON of a piquet-pack card."""
    ranks = {"7": "SEVEN", "8": "EIGHT", "9": "NINE", "T": "TEN", "J": "JACK"}
    ranks |= {"Q": "QUEEN", "K": "KING", "A": "ACE"}
    suits = {"He": "HEARTS", "Di": "DIAMONDS", "Cl": "CLUBS", "Sp": "SPADES"}
    return {"suit": "SUIT_" + suits[text[-2:]], "rank": "RANK_" + ranks[text[:-2]]}


def cards_of(value: Any) -> list[dict[str, str]]:
    """Every card (an object with a suit and a rank) anywhere in a JSON value."""
    if isinstance(value, dict):
        if set(value) == {"suit", "rank"}:
            return [value]
        return [c for v in value.values() for c in cards_of(v)]
    if isinstance(value, list):
        return [c for v in value for c in cards_of(v)]
    return []


async def create(session: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> dict[str, Any]:
    created = await call(session, "POST", f"{url}/v1/games", body, token=LOBBY_TOKEN)
    assert created.status == 200, created.body
    game: dict[str, Any] = created.body
    return game


def test_a_french_truc_game_is_played_through_the_gateway(rest_stack: RestStack) -> None:
    url = rest_stack.url
    players = [f"{uuid.uuid4().hex[:8]}-p{seat}" for seat in range(2)]
    tokens = [token(p) for p in players]
    rng = random.Random(3)

    async def scenario(session: aiohttp.ClientSession) -> None:
        options = {
            "ruleSet": "RULE_SET_FRENCH_TRUC",
            "trickOrder": "TRICK_ORDER_SEVEN_ACE",
            "targetScore": 5,
            "manchesToWin": 1,
        }
        created = await create(session, url, {"players": players, "options": options})
        name, game = created["name"], created["game"]
        assert (game["ruleSet"], game["seatCount"]) == ("RULE_SET_FRENCH_TRUC", 2)
        assert game["options"]["trickOrder"] == "TRICK_ORDER_SEVEN_ACE"
        assert game["options"]["ruleSet"] == "RULE_SET_FRENCH_TRUC"
        assert [s["player"] for s in game["seats"]] == players
        assert "hand" not in game or not game["hand"]  # the lobby sees no hand

        act = f"{url}/v1/{name}:submitAction"
        spanish = {"playCard": {"suit": "SUIT_SWORDS", "rank": "RANK_ONE"}}
        kinds: set[str] = set()
        for _ in range(2000):
            spectator = await call(session, "GET", f"{url}/v1/{name}", token=LOBBY_TOKEN)
            assert spectator.status == 200, spectator.body
            if spectator.body["game"]["finished"]:
                break
            seat = spectator.body["game"]["toAct"]
            mine = await call(session, "GET", f"{url}/v1/{name}", token=tokens[seat])
            view = mine.body["game"]
            assert view["seat"] == seat and len(view["hand"]) == view["seats"][seat]["handSize"]
            for dealt in (e["cardsDealt"] for e in view["events"] if "cardsDealt" in e):
                assert dealt["seat"] == seat  # never another seat's cards
            for played in cards_of(view):
                assert played["suit"] in FRENCH_SUITS and played["rank"] in FRENCH_RANKS
            if view["prompt"] == "PROMPT_TURN" and "playCard" not in kinds:
                refused = await call(session, "POST", act, {"action": spanish}, token=tokens[seat])
                assert (refused.status, refused.reason) == (400, "CARD_NOT_IN_HAND"), refused.body
            legal = view["legalActions"]
            plays = [a for a in legal if "playCard" in a]
            action = rng.choice(plays if plays and rng.random() < 0.6 else legal)
            if "CALL_RAISE" not in kinds and {"call": "CALL_RAISE"} in legal:
                action = {"call": "CALL_RAISE"}  # the first time it may, a seat raises
            if "playCard" in action:  # sent as a card of its own notation, by enum names
                text = next(
                    t
                    for t in (f"{r}{s}" for r in "789TJQKA" for s in ("He", "Di", "Cl", "Sp"))
                    if card(t) == action["playCard"]
                )
                action = {"playCard": card(text)}
            kinds.add(next(iter(action)) if "call" not in action else action["call"])
            done = await call(
                session,
                "POST",
                act,
                {"action": action, "etag": view["etag"], "requestId": uuid.uuid4().hex},
                token=tokens[seat],
            )
            assert done.status == 200, done.body
            assert done.body["game"]["ruleSet"] == "RULE_SET_FRENCH_TRUC"
            if action.get("call") == "CALL_RAISE":
                answer = done.body["game"]
                assert answer["prompt"] == "PROMPT_RAISE_ANSWER"
                assert answer["trucCall"] == {
                    "call": "CALL_RAISE",
                    "caller": seat,
                    "answerer": 1 - seat,
                }
        else:
            raise AssertionError("the game did not end")
        assert {"playCard", "CALL_RAISE"} <= kinds, kinds

        final = await call(session, "GET", f"{url}/v1/{name}", token=tokens[0])
        assert final.body["game"]["finished"] and final.body["game"]["winner"] != "TEAM_UNSPECIFIED"
        versions = []
        async with sse(session, f"{url}/v1/{name}:watch", token=tokens[1]) as stream:
            async for event in stream:
                if event.event == "end":
                    break
                versions.append(int(event.id or 0))
                assert event.data["game"]["seat"] == 1
                assert event.data["game"]["seatCount"] == 2
                for dealt in (e["cardsDealt"] for e in event.data["events"] if "cardsDealt" in e):
                    assert dealt["seat"] == 1
        assert versions == list(range(1, int(final.body["game"]["etag"]) + 1))

    run(scenario)


def test_rule_set_enums_are_read_by_name_and_a_bad_one_is_bad_request(
    rest_stack: RestStack,
) -> None:
    url = rest_stack.url

    async def scenario(session: aiohttp.ClientSession) -> None:
        four = [f"{uuid.uuid4().hex[:8]}-p{seat}" for seat in range(4)]
        created = await create(
            session,
            url,
            {"players": four, "options": {"rule_set": "RULE_SET_PARTNERSHIP_TRUC"}},
        )
        game = created["game"]
        assert (game["ruleSet"], game["seatCount"]) == ("RULE_SET_PARTNERSHIP_TRUC", 4)
        assert game["governors"] == [game["dealer"], game["eldest"]]
        assert [s["governor"] for s in game["seats"]] == [s in game["governors"] for s in range(4)]
        catalan = await create(
            session,
            url,
            {"players": four[:2], "options": {"ruleSet": "RULE_SET_CATALAN_TRUC", "seats": 2}},
        )
        assert catalan["game"]["seatCount"] == 2
        name = catalan["name"]
        # The Spanish pack: a piquet card is not in hand.
        mine = await call(session, "GET", f"{url}/v1/{name}", token=token(four[0]))
        seat = mine.body["game"]["toAct"]
        refused = await call(
            session,
            "POST",
            f"{url}/v1/{name}:submitAction",
            {"action": {"playCard": card("QHe")}},
            token=token(four[seat]),
        )
        assert (refused.status, refused.reason) == (400, "CARD_NOT_IN_HAND"), refused.body
        raised = await call(
            session,
            "POST",
            f"{url}/v1/{name}:submitAction",
            {"action": {"call": "CALL_RAISE"}},
            token=token(four[seat]),
        )
        assert (raised.status, raised.reason) == (400, "NOT_ALLOWED_NOW"), raised.body

        for body, reason in (
            ({"players": four[:2], "options": {"ruleSet": "RULE_SET_BRISCOLA"}}, "BAD_REQUEST"),
            (
                {
                    "players": four[:2],
                    "options": {"ruleSet": "RULE_SET_FRENCH_TRUC", "aceValue": 1},
                },
                "BAD_REQUEST",
            ),
            ({"players": four, "options": {"ruleSet": "RULE_SET_FRENCH_TRUC"}}, "BAD_REQUEST"),
        ):
            bad = await call(session, "POST", f"{url}/v1/games", body, token=LOBBY_TOKEN)
            assert (bad.status, bad.reason) == (400, reason), bad.body

    run(scenario)


def run(check: Callable[[aiohttp.ClientSession], Awaitable[None]]) -> None:
    async def go() -> None:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as session:
            await check(session)

    asyncio.run(go())
