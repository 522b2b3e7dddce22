"""No table for an absent player (issue 14), through real processes: a queued
ticket takes part in matching, at a table of players or with bots, only while a
member follows it (a WatchTicket stream open on it, or a GetTicket) within the
presence window (``TRUC_TICKET_PRESENCE_SECONDS``, 2 s here). The record is in
Redis: a follower on either lobby replica counts, and a ticket whose follower
went away stops being matched within the window.

The tickets' states are read from Redis, never with GetTicket (which follows)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from typing import cast

import pytest
import redis
from truc.v1 import lobby_pb2

from truc_dev_redis import RedisServer
from truc_lobby.store import BOT_JOBS, ticket_key

from .aio_lobby import MATCHED, AioStack, unique_options
from .conftest import Stack, start_stack

PRESENCE = 2.0
BOT_WAIT = 1.0
GRACE = 6.0


@pytest.fixture(scope="module")
def with_bots() -> Iterator[Stack]:
    """Bots after 1 s, presence 2 s, unwatched tickets expire after 6 s; on a Redis
    of its own (another stack's matcher would seat these tickets too)."""
    with RedisServer() as own:
        started = start_stack(
            own.url,
            TRUC_BOT_WAIT_SECONDS=str(BOT_WAIT),
            TRUC_TICKET_PRESENCE_SECONDS=str(PRESENCE),
            TRUC_TICKET_GRACE_SECONDS=str(GRACE),
            TRUC_MATCH_INTERVAL_MS="50",
        )
        yield started
        started.stop()


@pytest.fixture(scope="module")
def without_bots() -> Iterator[Stack]:
    """Bots off, presence 2 s, the default grace (30 s); on a Redis of its own."""
    with RedisServer() as own:
        started = start_stack(
            own.url,
            TRUC_BOT_WAIT_SECONDS="0",
            TRUC_TICKET_PRESENCE_SECONDS=str(PRESENCE),
            TRUC_MATCH_INTERVAL_MS="50",
        )
        yield started
        started.stop()


class Peek:
    """The tickets as stored (reading them with GetTicket would follow them)."""

    def __init__(self, url: str) -> None:
        self._redis = redis.Redis.from_url(url, decode_responses=True)

    def state(self, ticket: lobby_pb2.Ticket) -> str:
        key = ticket_key(ticket.name.removeprefix("tickets/"))
        return cast(str | None, self._redis.hget(key, "s")) or ""

    def game(self, ticket: lobby_pb2.Ticket) -> str:
        key = ticket_key(ticket.name.removeprefix("tickets/"))
        return cast(str | None, self._redis.hget(key, "g")) or ""

    def bot_jobs(self) -> int:
        return int(cast(int, self._redis.xlen(BOT_JOBS)))

    def close(self) -> None:
        self._redis.close()


@contextlib.asynccontextmanager
async def clients(stack: Stack) -> AsyncIterator[tuple[AioStack, Peek]]:
    """The stack's asyncio clients and a view of its stored tickets, closed after."""
    aio = AioStack(stack)
    peek = Peek(stack.redis_url)
    try:
        yield aio, peek
    finally:
        peek.close()
        await aio.close()


async def _wait_stored(peek: Peek, ticket: lobby_pb2.Ticket, state: str, timeout: float) -> float:
    """Seconds until the stored ticket is in ``state``."""
    began = time.monotonic()
    while peek.state(ticket) != state:
        assert time.monotonic() - began < timeout, f"{ticket.name} {peek.state(ticket)}"
        await asyncio.sleep(0.05)
    return time.monotonic() - began


async def _unwatched(stack: Stack) -> None:
    async with clients(stack) as (aio, peek):
        options = unique_options()
        absent = await aio.sign_in("absent")
        queued_at = time.monotonic()
        ticket = await aio.create(absent, options=options, follow=False)
        jobs_before = peek.bot_jobs()
        # Five players who follow their tickets (as clients do) join it.
        players = [await aio.sign_in(f"here{i}", i) for i in range(5)]
        tickets = [await aio.create(p, options=options, index=i) for i, p in enumerate(players)]
        finals = [
            await aio.wait_state(p, t.name, [MATCHED], timeout=BOT_WAIT + 5)
            for p, t in zip(players, tickets, strict=True)
        ]
        # They got a table of their own, a bot in the seat the absent ticket
        # would have had; the absent ticket is on no table.
        assert len({t.game for t in finals}) == 1
        table = {a.player: a.bot for a in finals[0].table}
        assert absent.player not in table
        assert sorted(table.values()) == [False] * 5 + [True]
        assert peek.bot_jobs() - jobs_before == 1
        assert peek.state(ticket) == "QUEUED" and not peek.game(ticket)
        # Long past the bot wait it got no bots either, and it expires at the grace.
        await _wait_stored(peek, ticket, "EXPIRED", timeout=GRACE + 3)
        expired_after = time.monotonic() - queued_at
        assert GRACE - 0.5 <= expired_after <= GRACE + 3, expired_after
        assert not peek.game(ticket)
        assert peek.bot_jobs() - jobs_before == 1


def test_an_unwatched_ticket_gets_no_table_and_no_bots_and_expires(with_bots: Stack) -> None:
    asyncio.run(_unwatched(with_bots))


async def _watched(stack: Stack) -> None:
    async with clients(stack) as (aio, peek):
        alone = await aio.sign_in("alone")
        began = time.monotonic()
        ticket = await aio.create(alone, options=unique_options())  # followed (a stream)
        await _wait_stored(peek, ticket, "MATCHED", timeout=BOT_WAIT + 5)
        waited = time.monotonic() - began
        assert BOT_WAIT - 0.2 <= waited <= BOT_WAIT + 3, waited
        seated = await aio.get(alone, ticket.name)
        assert sum(a.bot for a in seated.table) == 5


def test_a_watched_ticket_gets_bots_after_the_bot_wait(with_bots: Stack) -> None:
    asyncio.run(_watched(with_bots))


async def _late_follower(stack: Stack) -> None:
    async with clients(stack) as (aio, peek):
        late = await aio.sign_in("late")
        ticket = await aio.create(late, options=unique_options(), follow=False)
        await asyncio.sleep(BOT_WAIT + 1.5)  # the bot wait is over, nobody follows it
        assert peek.state(ticket) == "QUEUED"
        followed_at = time.monotonic()
        aio.follow(late, ticket.name, index=1)
        # The bot wait counted from the queueing: bots fill at once, not a bot wait later.
        took = await _wait_stored(peek, ticket, "MATCHED", timeout=3)
        assert took < BOT_WAIT, time.monotonic() - followed_at


def test_the_bot_wait_counts_from_the_queueing_but_bots_wait_for_a_follower(
    with_bots: Stack,
) -> None:
    asyncio.run(_late_follower(with_bots))


async def _gone(stack: Stack) -> None:
    async with clients(stack) as (aio, peek):
        options = unique_options()
        leaving = await aio.sign_in("leaving")
        ticket = await aio.create(leaving, options=options, follow=False)
        watch = aio.follow(leaving, ticket.name, index=0)
        await asyncio.sleep(0.5)
        watch.cancel()  # the watcher goes away (its replica's stream ends)
        gone_at = time.monotonic()
        await asyncio.sleep(PRESENCE + 0.5)
        # Five followed tickets now complete its table: it must not be seated.
        players = [await aio.sign_in(f"stay{i}", i) for i in range(5)]
        others = [await aio.create(p, options=options, index=i) for i, p in enumerate(players)]
        await asyncio.sleep(1.5)  # many matching rounds
        assert peek.state(ticket) == "QUEUED", time.monotonic() - gone_at
        assert all(peek.state(t) == "QUEUED" for t in others)
        # Its player reads it once, on the other replica: followed again, seated.
        assert (await aio.get(leaving, ticket.name, index=1)).state == lobby_pb2.TICKET_STATE_QUEUED
        await _wait_stored(peek, ticket, "MATCHED", timeout=3)
        games = {peek.game(t) for t in [ticket, *others]}
        assert len(games) == 1 and "" not in games


def test_a_ticket_whose_watcher_went_away_stops_being_matched(without_bots: Stack) -> None:
    asyncio.run(_gone(without_bots))


async def _party(stack: Stack) -> None:
    """A party ticket is followed by any of its members."""
    async with clients(stack) as (aio, peek):
        options = unique_options()
        members = [await aio.sign_in(f"party{i}", i) for i in range(3)]
        party = await aio.party_ticket(members, options, follow=False)
        solos = [await aio.sign_in(f"solo{i}", i) for i in range(3)]
        tickets = [await aio.create(g, options=options, index=i) for i, g in enumerate(solos)]
        await asyncio.sleep(1.0)
        assert peek.state(party) == "QUEUED"
        assert all(peek.state(t) == "QUEUED" for t in tickets)
        aio.follow(members[2], party.name, index=1)  # a member, not the leader
        await _wait_stored(peek, party, "MATCHED", timeout=3)
        assert {peek.game(t) for t in tickets} == {peek.game(party)}


def test_a_party_ticket_is_followed_by_any_member(without_bots: Stack) -> None:
    asyncio.run(_party(without_bots))
