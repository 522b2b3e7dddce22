"""Live games, spectator grants and the ticket's progress through the real stack
(its own Redis, so the live list holds this module's games only; bots fill a
lone player's table after 2 s): ListLiveGames lists the public tables' games,
the most recently seated first, in pages and by rule set, and drops a game once
it ended; CreateSpectatorGrant opens a public game (or a private one to its
players) to GameService.GetGame as a spectator; the history keeps the names and
the privacy; WatchTicket resends a queued ticket during the bot wait."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Iterator
from dataclasses import dataclass

import grpc
import jwt
import pytest
from redis.asyncio import Redis as AsyncRedis
from truc.v1 import game_pb2, lobby_pb2, lobby_service_pb2

from tests.client.test_client import play_seat
from tests.service.conftest import SECRET
from truc_client.client import TrucClient
from truc_dev_redis import RedisServer
from truc_lobby.store import LIVE, LIVE_BOUND_MS, SeatedTable, live_key, table_key
from truc_rules.rule_set import RuleSet
from truc_service.tokens import issue_token

from .aio_lobby import CANCELLED, MATCHED, QUEUED, AioStack, Guest, expect_aio_error
from .conftest import Stack

Code = grpc.StatusCode
R = game_pb2
BOT_WAIT = 2.0
PROGRESS = 0.3
GRANTS = 5


def _french(target: int) -> game_pb2.RuleOptions:
    return R.RuleOptions(rule_set=R.RULE_SET_FRENCH_TRUC, target_score=target, manches_to_win=1)


@pytest.fixture(scope="module")
def live_stack() -> Iterator[Stack]:
    with RedisServer() as redis:
        started = Stack(
            redis.url,
            TRUC_BOT_WAIT_SECONDS=str(BOT_WAIT),
            TRUC_MATCH_INTERVAL_MS="50",
            TRUC_TICKET_PROGRESS_SECONDS=str(PROGRESS),
            TRUC_SPECTATOR_GRANTS_PER_PLAYER=str(GRANTS),
        )
        try:
            yield started
        finally:
            started.stop()


@dataclass
class Seated:
    guest: Guest
    ticket: lobby_pb2.Ticket


@dataclass
class Tables:
    french: list[Seated]
    """Three public French Truc games; the first one's match is one point."""
    sackson: Seated
    private: Seated
    """A private French Truc table of one point."""


async def _seat(aio: AioStack, name: str, options: game_pb2.RuleOptions, private: bool) -> Seated:
    guest = await aio.sign_in(name)
    reply = await aio.lobby().CreateTicket(
        lobby_service_pb2.CreateTicketRequest(options=options, private=private),
        metadata=guest.metadata,
        timeout=10,
    )
    aio.follow(guest, reply.ticket.name)
    ticket = await aio.wait_state(guest, reply.ticket.name, [MATCHED], timeout=20)
    return Seated(guest, ticket)


@pytest.fixture(scope="module")
def tables(live_stack: Stack) -> Tables:
    """Five lone players, each at a table of their own with a bot (distinct
    options: none of them matches another)."""

    async def main() -> Tables:
        aio = AioStack(live_stack)
        try:
            seated = await asyncio.gather(
                _seat(aio, "Françoise", _french(1), False),
                _seat(aio, "山田", _french(11), False),
                _seat(aio, "Ørjan", _french(12), False),
                _seat(aio, "Sack", R.RuleOptions(rule_set=R.RULE_SET_SACKSON_TRUC), False),
                _seat(aio, "Hidden", _french(1), True),
            )
        finally:
            await aio.close()
        return Tables(list(seated[:3]), seated[3], seated[4])

    return asyncio.run(main())


async def _list(
    aio: AioStack,
    guest: Guest,
    size: int = 0,
    token: str = "",
    rule_set: game_pb2.RuleSet.ValueType = R.RULE_SET_UNSPECIFIED,
) -> lobby_service_pb2.ListLiveGamesResponse:
    reply: lobby_service_pb2.ListLiveGamesResponse = await aio.lobby().ListLiveGames(
        lobby_service_pb2.ListLiveGamesRequest(page_size=size, page_token=token, rule_set=rule_set),
        metadata=guest.metadata,
        timeout=10,
    )
    return reply


async def _pages(
    aio: AioStack,
    guest: Guest,
    size: int,
    rule_set: game_pb2.RuleSet.ValueType = R.RULE_SET_UNSPECIFIED,
) -> list[list[str]]:
    pages: list[list[str]] = []
    token = ""
    while True:
        page = await _list(aio, guest, size, token, rule_set)
        pages.append([g.name for g in page.games])
        token = page.next_page_token
        if not token:
            return pages


async def _listing(live_stack: Stack, tables: Tables) -> None:
    aio = AioStack(live_stack)
    try:
        viewer = await aio.sign_in("viewer")
        listed = (await _list(aio, viewer)).games
        public = [*tables.french, tables.sackson]
        assert {g.name for g in listed} == {s.ticket.game for s in public}
        assert tables.private.ticket.game not in {g.name for g in listed}
        # The most recently seated first (ties: by name, descending).
        assert [(g.start_time.ToMilliseconds(), g.name) for g in listed] == sorted(
            ((g.start_time.ToMilliseconds(), g.name) for g in listed), reverse=True
        )
        by_name = {g.name: g for g in listed}
        for seated, name in zip(public, ("Françoise", "山田", "Ørjan", "Sack"), strict=True):
            game = by_name[seated.ticket.game]
            assert game.seat_count == 2 and game.options.rule_set == game.rule_set
            assert game.start_time.ToMilliseconds() > 0
            assert sorted((a.seat, a.player, a.bot) for a in game.table) == sorted(
                (a.seat, a.player, a.bot) for a in seated.ticket.table
            )
            for seat in game.table:
                assert seat.display_name == (f"Bot {seat.seat}" if seat.bot else name)
        assert by_name[tables.sackson.ticket.game].rule_set == R.RULE_SET_SACKSON_TRUC
        # Pages of two: the French games are three.
        french = await _pages(aio, viewer, 2, R.RULE_SET_FRENCH_TRUC)
        assert [len(p) for p in french] == [2, 1]
        everything = [g.name for g in listed]
        assert [name for page in french for name in page] == [
            g for g in everything if g in {s.ticket.game for s in tables.french}
        ]
        assert await _pages(aio, viewer, 2) == [everything[:2], everything[2:]]
        assert await _pages(aio, viewer, 1, R.RULE_SET_SACKSON_TRUC) == [
            [tables.sackson.ticket.game]
        ]
        assert (await _list(aio, viewer, rule_set=R.RULE_SET_CATALAN_TRUC)).games == []
    finally:
        await aio.close()


def test_live_public_games_are_listed_newest_first_in_pages_and_by_rule_set(
    live_stack: Stack, tables: Tables
) -> None:
    asyncio.run(_listing(live_stack, tables))


async def _bad_listings(live_stack: Stack) -> None:
    aio = AioStack(live_stack)
    try:
        viewer = await aio.sign_in("viewer")
        for size, token in ((101, ""), (-1, ""), (2, "nope"), (2, "x" * 300)):
            await expect_aio_error(
                _list(aio, viewer, size, token), Code.INVALID_ARGUMENT, "BAD_REQUEST"
            )
        unknown = game_pb2.RuleSet.ValueType(42)
        await expect_aio_error(_list(aio, viewer, rule_set=unknown), Code.INVALID_ARGUMENT)
        spectator = Guest(
            "watcher", issue_token(SECRET, "watcher", role="spectator", audience="truc-lobby")
        )
        await expect_aio_error(_list(aio, spectator), Code.PERMISSION_DENIED, "PLAYERS_ONLY")
        await expect_aio_error(
            aio.lobby().ListLiveGames(lobby_service_pb2.ListLiveGamesRequest(), timeout=10),
            Code.UNAUTHENTICATED,
            "TOKEN_MISSING",
        )
    finally:
        await aio.close()


def test_bad_pages_and_other_tokens_are_refused(live_stack: Stack) -> None:
    asyncio.run(_bad_listings(live_stack))


async def _bounded(live_stack: Stack, tables: Tables) -> None:
    """Games whose end the lobby never learned: listed for a bounded time only."""
    aio = AioStack(live_stack)
    client = AsyncRedis.from_url(live_stack.redis_url)
    try:
        viewer = await aio.sign_in("viewer")
        now_ms = int(time.time() * 1000)
        stale = SeatedTable(
            "staleGame",
            RuleSet.FRENCH_TRUC,
            _french(5).SerializeToString(),
            ((0, "someone", False, "Someone"), (1, "bot:b", True, "Bot 1")),
            now_ms - LIVE_BOUND_MS - 1000,
            False,
        )
        await client.set(table_key(stale.game), stale.encode())
        for key in (LIVE, live_key(RuleSet.FRENCH_TRUC)):
            # Seated longer ago than any match lasts, and one whose record expired.
            await client.zadd(key, {stale.game: stale.start_ms, "expiredGame": now_ms})
        for rule_set in (R.RULE_SET_UNSPECIFIED, R.RULE_SET_FRENCH_TRUC):
            names = {g.name for g in (await _list(aio, viewer, rule_set=rule_set)).games}
            assert "games/staleGame" not in names and "games/expiredGame" not in names
            assert tables.french[1].ticket.game in names
        for key in (LIVE, live_key(RuleSet.FRENCH_TRUC)):
            assert await client.zscore(key, stale.game) is None
            assert await client.zscore(key, "expiredGame") is None
    finally:
        await client.aclose()
        await aio.close()


def test_a_game_never_seen_ending_is_listed_for_a_bounded_time(
    live_stack: Stack, tables: Tables
) -> None:
    asyncio.run(_bounded(live_stack, tables))


async def _grant(
    aio: AioStack, guest: Guest, game: str
) -> lobby_service_pb2.CreateSpectatorGrantResponse:
    reply: lobby_service_pb2.CreateSpectatorGrantResponse = await aio.lobby(1).CreateSpectatorGrant(
        lobby_service_pb2.CreateSpectatorGrantRequest(name=game),
        metadata=guest.metadata,
        timeout=10,
    )
    return reply


async def _watch_as_spectator(aio: AioStack, token: str, game: str) -> game_pb2.GameView:
    view = await aio.get_game(token, game)
    assert not view.HasField("seat") and not view.hand  # a spectator's view: no seat, no hand
    assert len(view.seats) == 2
    return view


async def _grants(live_stack: Stack, tables: Tables) -> None:
    aio = AioStack(live_stack)
    try:
        outsider = await aio.sign_in("Zoë")
        game = tables.french[1].ticket.game
        before = time.time()
        grant = await _grant(aio, outsider, game)
        assert grant.game == game
        claims = jwt.decode(grant.token, SECRET, algorithms=["HS256"], audience="truc-game")
        assert claims["role"] == "spectator" and claims["game"] == game
        assert claims["sub"] == outsider.player and claims["name"] == "Zoë"
        assert abs(grant.expire_time.seconds - (before + 14_400)) < 5
        assert claims["exp"] == grant.expire_time.seconds
        view = await _watch_as_spectator(aio, grant.token, game)
        names = {s.seat: s.display_name for s in view.seats}
        assert {a.seat: a.display_name for a in tables.french[1].ticket.table} == names
        # A private table's game: not to an outsider; to its own player, yes.
        private = tables.private.ticket.game
        await expect_aio_error(
            _grant(aio, outsider, private), Code.PERMISSION_DENIED, "GAME_PRIVATE"
        )
        own = await _grant(aio, tables.private.guest, private)
        await _watch_as_spectator(aio, own.token, private)
        # No such game, or no game name at all.
        await expect_aio_error(
            _grant(aio, outsider, "games/nosuchgame"), Code.NOT_FOUND, "GAME_NOT_FOUND"
        )
        careless = await aio.sign_in("careless")  # each call counts towards the limit
        for bad in ("", "games/", "tickets/abc", "games/a/b", "games/" + "x" * 65):
            await expect_aio_error(_grant(aio, careless, bad), Code.INVALID_ARGUMENT, "BAD_NAME")
    finally:
        await aio.close()


def test_a_spectator_grant_opens_a_public_game_and_a_private_one_to_its_players(
    live_stack: Stack, tables: Tables
) -> None:
    asyncio.run(_grants(live_stack, tables))


async def _grant_limit(live_stack: Stack, tables: Tables) -> None:
    aio = AioStack(live_stack)
    try:
        eager = await aio.sign_in("eager")
        game = tables.french[2].ticket.game
        for _ in range(GRANTS):
            await _grant(aio, eager, game)
        await expect_aio_error(_grant(aio, eager, game), Code.RESOURCE_EXHAUSTED, "RATE_LIMITED")
        # Another player is not held back by it.
        await _grant(aio, await aio.sign_in("patient"), game)
    finally:
        await aio.close()


def test_spectator_grants_are_limited_per_player(live_stack: Stack, tables: Tables) -> None:
    asyncio.run(_grant_limit(live_stack, tables))


async def _play_out(live_stack: Stack, seated: Seated) -> None:
    lobby, game = live_stack.lobbies[0].address, live_stack.game.address
    async with TrucClient(lobby, game) as client:
        client.use_token(seated.guest.token)
        final, _, _ = await asyncio.wait_for(play_seat(client, seated.ticket.game, 3), 60)
        assert final.finished


async def _ended(live_stack: Stack, tables: Tables) -> None:
    aio = AioStack(live_stack)
    try:
        first = tables.french[0]
        viewer = await aio.sign_in("viewer")
        assert first.ticket.game in {g.name for g in (await _list(aio, viewer)).games}
        await asyncio.gather(_play_out(live_stack, first), _play_out(live_stack, tables.private))
        deadline = time.monotonic() + 15
        while first.ticket.game in {g.name for g in (await _list(aio, viewer)).games}:
            assert time.monotonic() < deadline, "the game is still listed after its end"
            await asyncio.sleep(0.1)
        assert tables.french[1].ticket.game in {g.name for g in (await _list(aio, viewer)).games}
        # A finished game is still watched (replayed) with a grant.
        grant = await _grant(aio, viewer, first.ticket.game)
        assert (await _watch_as_spectator(aio, grant.token, first.ticket.game)).finished
        # The history keeps the names and the table's privacy.
        for seated, private in ((first, False), (tables.private, True)):
            deadline = time.monotonic() + 15
            while True:
                summaries = (
                    await aio.lobby().ListGames(
                        lobby_service_pb2.ListGamesRequest(),
                        metadata=seated.guest.metadata,
                        timeout=10,
                    )
                ).games
                if summaries:
                    break
                assert time.monotonic() < deadline, "the game never reached the history"
                await asyncio.sleep(0.1)
            (summary,) = summaries
            assert summary.private == private
            assert {a.seat: a.display_name for a in summary.table} == {
                a.seat: a.display_name for a in seated.ticket.table
            }
            assert any(a.display_name == f"Bot {a.seat}" for a in summary.table if a.bot)
    finally:
        await aio.close()


def test_a_game_leaves_the_list_when_it_ends_and_its_history_keeps_the_names(
    live_stack: Stack, tables: Tables
) -> None:
    asyncio.run(_ended(live_stack, tables))


async def _progress(live_stack: Stack) -> None:
    aio = AioStack(live_stack)
    try:
        first, second = await aio.sign_in("first"), await aio.sign_in("second")
        options = R.RuleOptions(target_score=7)  # Truc y Flou: six seats, nobody else's
        ticket = await aio.create(first, options=options, follow=False)
        seen: list[lobby_pb2.Ticket] = []
        joined: lobby_pb2.Ticket | None = None
        stream = aio.lobby(1).WatchTicket(
            lobby_service_pb2.WatchTicketRequest(name=ticket.name), metadata=first.metadata
        )
        started = time.monotonic()
        async for message in stream:
            seen.append(message.ticket)
            if joined is None:
                joined = await aio.create(second, options=options)
            queued = [t for t in seen if t.state == QUEUED]
            if len(queued) >= 4 and any(t.players_waiting == 2 for t in queued):
                break
            assert message.ticket.state == QUEUED, seen
        stream.cancel()
        elapsed = time.monotonic() - started
        assert joined is not None
        for mine, guest in ((ticket, first), (joined, second)):
            assert (await aio.cancel(guest, mine.name)).state == CANCELLED
        # Sent again during the wait with nothing else changed: a countdown's clock.
        assert elapsed < BOT_WAIT
        waiting = [t.players_waiting for t in seen]
        assert waiting[0] == 1 and waiting[-1] == 2 and waiting == sorted(waiting), waiting
        assert sum(1 for a, b in itertools.pairwise(seen) if a == b) >= 1, seen
        for sent in seen:
            assert sent.bots_time.ToMilliseconds() - sent.create_time.ToMilliseconds() == int(
                BOT_WAIT * 1000
            )
    finally:
        await aio.close()


def test_a_queued_ticket_is_sent_again_during_the_bot_wait(live_stack: Stack) -> None:
    asyncio.run(_progress(live_stack))
