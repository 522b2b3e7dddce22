"""Bots through the real stack (bot wait 1 s): a lone human's table is filled with
server-side bots and the whole match is played out, queue to match end; six
humans played by local bots finish theirs too."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import cast

import pytest
import redis
from truc.v1 import game_pb2, lobby_pb2, lobby_service_pb2

from truc_bots import BotPlayer, HeuristicPolicy
from truc_dev_redis import RedisServer
from truc_lobby.store import BOT_JOBS

from .aio_lobby import (
    MATCHED,
    QUEUED,
    AioStack,
    Guest,
    purge_lobby_queue,
    team_of,
    unique_options,
)
from .conftest import Stack, start_stack

MATCH_TIMEOUT = 60.0
BOT_WAIT = 1.0


@pytest.fixture(scope="module")
def bot_stack(redis_server: RedisServer) -> Iterator[Stack]:
    """A dedicated stack whose lobbies fill a table with bots after 1 s."""
    purge_lobby_queue(redis_server.url)
    started = start_stack(
        redis_server.url,
        TRUC_BOT_WAIT_SECONDS=str(int(BOT_WAIT)),
        TRUC_MATCH_INTERVAL_MS="50",
    )
    yield started
    started.stop()


def bot_jobs_of(redis_url: str, game: str) -> int:
    """How many entries of the bot-job stream are for ``game``."""
    with redis.Redis.from_url(redis_url, decode_responses=True) as client:
        jobs = cast(list[tuple[str, dict[str, str]]], client.xrange(BOT_JOBS))
    return sum(1 for _, fields in jobs if fields.get("game") == game)


async def _watch_until_closed(aio: AioStack, guest: Guest, name: str) -> lobby_pb2.Ticket:
    """WatchTicket until the stream ends; the last ticket it sent."""
    last = lobby_pb2.Ticket()
    async for message in aio.lobby(1).WatchTicket(
        lobby_service_pb2.WatchTicketRequest(name=name), metadata=guest.metadata, timeout=15
    ):
        last = message.ticket
    return last


def _check_table(ticket: lobby_pb2.Ticket, humans: set[str]) -> None:
    """Six seats, teams by seat, the humans on it not flagged as bots, bots elsewhere."""
    assert sorted(a.seat for a in ticket.table) == list(range(6)), ticket.table
    assert len({a.player for a in ticket.table}) == 6
    for assignment in ticket.table:
        assert assignment.team == team_of(assignment.seat)
        assert assignment.bot == (assignment.player not in humans), ticket.table


def _check_finished(view: game_pb2.GameView) -> None:
    assert view.finished and view.phase == game_pb2.PHASE_MATCH_OVER, view.phase
    assert view.winner in (game_pb2.TEAM_A, game_pb2.TEAM_B)


async def _human_with_bots(stack: Stack) -> None:
    aio = AioStack(stack)
    try:
        human = await aio.sign_in("alone")
        began = time.monotonic()
        ticket = await aio.create(human)
        assert ticket.state == QUEUED
        matched = await _watch_until_closed(aio, human, ticket.name)
        waited = time.monotonic() - began
        assert matched.state == MATCHED, matched
        assert 0.8 * BOT_WAIT <= waited <= BOT_WAIT + 3.0, waited
        _check_table(matched, {human.player})
        assert sum(a.bot for a in matched.table) == 5
        assert matched.team == team_of(matched.seat)
        # The human plays their own seat with the game token; the lobby's bots the others.
        bot = BotPlayer(aio.game, matched.game, matched.game_token, HeuristicPolicy(seed=1))
        final = await asyncio.wait_for(bot.run(), MATCH_TIMEOUT)
        assert final.seat == matched.seat
        _check_finished(final)
        assert bot.actions > 0
        view = await aio.get_game(matched.game_token, matched.game)
        _check_finished(view)
        assert [s.player for s in view.seats] == [
            a.player for a in sorted(matched.table, key=lambda a: a.seat)
        ]
        # Nobody slept through a turn: every seat, bots included, played its own.
        assert not [e for e in view.events if e.HasField("turn_timed_out")]
        # Each bot's job leaves the stream once its match is over.
        game_id = matched.game.removeprefix("games/")
        deadline = time.monotonic() + 10
        while bot_jobs_of(stack.redis_url, game_id):
            assert time.monotonic() < deadline, "the bots' jobs stay in the stream"
            await asyncio.sleep(0.1)
        print(
            f"\nhuman + 5 bots: seated after {waited:.1f} s, match over"
            f" after {bot.actions} own actions"
        )
    finally:
        await aio.close()


def test_a_lone_human_gets_five_bots_and_the_match_is_played_out(bot_stack: Stack) -> None:
    asyncio.run(_human_with_bots(bot_stack))


async def _six_humans(stack: Stack) -> None:
    aio = AioStack(stack)
    try:
        humans = list(await asyncio.gather(*(aio.sign_in(f"h{i}", i) for i in range(6))))
        tickets = await asyncio.gather(*(aio.create(h, index=i) for i, h in enumerate(humans)))
        finals = await asyncio.gather(
            *(
                aio.wait_state(h, t.name, [MATCHED], timeout=10)
                for h, t in zip(humans, tickets, strict=True)
            )
        )
        assert len({t.game for t in finals}) == 1
        _check_table(finals[0], {h.player for h in humans})  # no bot among them
        assert sorted(t.seat for t in finals) == list(range(6))
        bots = [
            BotPlayer(aio.game, t.game, t.game_token, HeuristicPolicy(seed=10 + t.seat))
            for t in finals
        ]
        views = await asyncio.wait_for(asyncio.gather(*(b.run() for b in bots)), MATCH_TIMEOUT)
        for ticket, view in zip(finals, views, strict=True):
            assert view.seat == ticket.seat
            _check_finished(view)
        assert len({v.winner for v in views}) == 1
        assert len({v.etag for v in views}) == 1
        assert all(b.actions > 0 for b in bots)
    finally:
        await aio.close()


def test_six_humans_played_by_local_bots_finish_their_match(bot_stack: Stack) -> None:
    asyncio.run(_six_humans(bot_stack))


async def _three_pairs(stack: Stack) -> None:
    aio = AioStack(stack)
    options = unique_options()
    pairs: list[tuple[list[Guest], lobby_pb2.Ticket]] = []
    try:
        for p in range(3):
            members = [await aio.sign_in(f"pair{p}", p), await aio.sign_in(f"mate{p}", p + 1)]
            ticket = await aio.party_ticket(members, options, index=p)
            assert ticket.state == QUEUED
            pairs.append((members, ticket))
        finals = await asyncio.gather(
            *(aio.wait_state(m[0], t.name, [MATCHED], timeout=BOT_WAIT + 4) for m, t in pairs)
        )
        humans = {g.player for members, _ in pairs for g in members}
        for (members, _), ticket in zip(pairs, finals, strict=True):
            _check_table(ticket, humans)
            teams = {a.team for a in ticket.table if a.player in {g.player for g in members}}
            assert len(teams) == 1
    finally:
        for members, ticket in pairs:
            if (await aio.get(members[0], ticket.name)).state == QUEUED:
                await aio.cancel(members[0], ticket.name)
        await aio.close()


def test_three_pairs_alone_are_completed_by_bots(bot_stack: Stack) -> None:
    asyncio.run(_three_pairs(bot_stack))
