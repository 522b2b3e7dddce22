"""ListGames: every finished game a player played, recorded by the lobby when
the game ends, listed most recent first in pages, and its whole log readable
afterwards through GameService.GetGame with the player's own token."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass

import grpc
import pytest
from truc.v1 import game_pb2, lobby_pb2

from tests.client.test_client import play_seat
from tests.service.conftest import redis_server  # noqa: F401
from truc_client.client import TrucClient, TrucError
from truc_dev_redis import RedisServer

from .conftest import Stack

SHORT = game_pb2.RuleOptions(target_score=1, manches_to_win=1)


@pytest.fixture(scope="module")
def history_stack(redis_server: RedisServer) -> Iterator[Stack]:  # noqa: F811
    # Bots fill a lone player's table after one second.
    started = Stack(redis_server.url, TRUC_BOT_WAIT_SECONDS="1", TRUC_MATCH_INTERVAL_MS="50")
    yield started
    started.stop()


@dataclass
class Played:
    token: str
    player: str
    tickets: list[lobby_pb2.Ticket]
    finals: list[game_pb2.GameView]
    pages: list[lobby_pb2.GameSummary]
    tokens: list[str]
    logs: list[game_pb2.GameView]


@pytest.fixture(scope="module")
def played(history_stack: Stack) -> Played:
    """One player plays two short games against bots, then reads their history."""

    async def main() -> Played:
        lobby, game = history_stack.lobbies[0].address, history_stack.game.address
        async with TrucClient(lobby, game) as client:
            await client.sign_in_guest("historian")
            tickets, finals = [], []
            for seed in (1, 2):
                # Queueing again the moment the last game ended works: the lobby
                # records that game on the spot if its follower has not yet.
                queued = await client.queue(options=SHORT)
                ticket = await client.wait_until_seated(queued.name, timeout=20)
                final, _, _ = await asyncio.wait_for(play_seat(client, ticket.game, seed), 60)
                tickets.append(ticket)
                finals.append(final)
            for _ in range(200):  # the lobby records a game shortly after it ends
                if len((await client.list_games()).games) == 2:
                    break
                await asyncio.sleep(0.1)
            pages: list[lobby_pb2.GameSummary] = []
            tokens: list[str] = []
            token = ""
            while True:
                page = await client.list_games(page_size=1, page_token=token)
                pages.extend(page.games)
                tokens.append(page.next_page_token)
                token = page.next_page_token
                if not token:
                    break
            # The logs, read with the player's own token (not the games' tokens).
            async with TrucClient(lobby, game) as reader:
                reader.use_token(client._token)
                logs = [await reader.get_game(summary.name) for summary in pages]
            return Played(client._token, client.player, tickets, finals, pages, tokens, logs)

    return asyncio.run(main())


def test_finished_games_are_listed_most_recent_first_one_page_at_a_time(played: Played) -> None:
    assert [s.name for s in played.pages] == [t.game for t in reversed(played.tickets)]
    assert played.tokens[0] and played.tokens[1] == ""  # the last page says so
    newest, oldest = played.pages
    assert newest.end_time.ToMilliseconds() >= oldest.end_time.ToMilliseconds() > 0


def test_a_summary_says_who_sat_where_who_won_and_the_rating_change(played: Played) -> None:
    for summary, ticket, final in zip(
        played.pages, reversed(played.tickets), reversed(played.finals), strict=True
    ):
        assert summary.seat == ticket.seat and summary.team == ticket.team
        assert [(a.seat, a.player, a.bot) for a in summary.table] == sorted(
            (a.seat, a.player, a.bot) for a in ticket.table
        )
        assert sum(a.bot for a in summary.table) == 5
        assert summary.winner == final.winner != game_pb2.TEAM_UNSPECIFIED
        won = summary.winner == summary.team
        assert (summary.rating_change > 0) == won and summary.rating_change != 0


def test_the_whole_log_is_readable_after_the_end_with_the_players_token(played: Played) -> None:
    for log, summary in zip(played.logs, played.pages, strict=True):
        assert log.finished and log.seat == summary.seat
        # From the very start (the deal) to the very end (the match's last version).
        assert log.events[0].version == 1 and log.events[-1].version == int(log.etag)
        assert log.events[-1].HasField("match_ended")


def test_other_players_see_none_of_it_and_bad_pages_are_refused(
    history_stack: Stack, played: Played
) -> None:
    async def main() -> list[TrucError]:
        lobby, game = history_stack.lobbies[1].address, history_stack.game.address
        errors = []
        async with TrucClient(lobby, game) as stranger:
            await stranger.sign_in_guest("stranger")
            assert list((await stranger.list_games()).games) == []
            for size, token in ((101, ""), (-1, ""), (1, "not-a-token"), (1, "x" * 300)):
                try:
                    await stranger.list_games(page_size=size, page_token=token)
                except TrucError as error:
                    errors.append(error)
        async with TrucClient(lobby, game) as anonymous:
            try:
                await anonymous.list_games()
            except TrucError as error:
                errors.append(error)
        return errors

    errors = asyncio.run(main())
    assert [(e.code, e.reason) for e in errors] == [
        (grpc.StatusCode.INVALID_ARGUMENT, "BAD_REQUEST")
    ] * 4 + [(grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MISSING")]
