"""The lobby observed from outside: six guests queue on two real lobby replicas and
are seated, a seventh waits; then the replicas' /metrics and JSON logs are read."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from truc.v1 import lobby_pb2, lobby_service_pb2

from tests.lobby_service.aio_lobby import purge_lobby_queue, unique_options
from tests.lobby_service.conftest import Stack, sign_in, start_stack
from tests.observability.scrape import Samples, json_lines
from tests.service.conftest import Metadata, redis_server, wait_until  # noqa: F401
from truc_dev_redis import RedisServer


@dataclass
class Matched:
    stack: Stack
    players: list[str]
    tickets: list[str]
    waiting: tuple[str, Metadata]
    """The seventh ticket (nobody to play with) and its leader's token."""


def _scrape_all(stack: Stack) -> list[Samples]:
    urls = [lobby.metrics_url for lobby in stack.lobbies]
    assert all(urls), stack.lobbies[0].log()
    return [Samples(url) for url in urls if url]


def _total(stack: Stack, name: str, **labels: str) -> float:
    return sum(samples.value(name, **labels) for samples in _scrape_all(stack))


@pytest.fixture(scope="module")
def matched(redis_server: RedisServer) -> Iterator[Matched]:  # noqa: F811
    purge_lobby_queue(redis_server.url)
    stack = start_stack(redis_server.url, TRUC_BOT_WAIT_SECONDS="0", TRUC_LOG_LEVEL="DEBUG")
    try:
        options = unique_options()
        players, tickets, tokens = [], [], []
        for i in range(6):
            lobby = stack.lobby(i)
            player, token = sign_in(lobby, f"obs{i}")
            reply = lobby.CreateTicket(
                lobby_service_pb2.CreateTicketRequest(options=options), metadata=token
            )
            players.append(player)
            tickets.append(reply.ticket.name)
            tokens.append(token)

        def state(i: int) -> int:
            request = lobby_service_pb2.GetTicketRequest(name=tickets[i])
            return int(stack.lobby(i).GetTicket(request, metadata=tokens[i]).ticket.state)

        wait_until(
            # Every poll reads all six tickets: reading a ticket follows it, and only
            # followed tickets are matched.
            lambda: [state(i) for i in range(6)] == [lobby_pb2.TICKET_STATE_MATCHED] * 6,
            timeout=20,
            what="six solo tickets seated",
        )
        alone, token = sign_in(stack.lobby(0), "obs-alone")
        reply = stack.lobby(0).CreateTicket(
            lobby_service_pb2.CreateTicketRequest(options=unique_options()), metadata=token
        )
        yield Matched(stack, [*players, alone], tickets, (reply.ticket.name, token))
        stack.lobby(0).CancelTicket(
            lobby_service_pb2.CancelTicketRequest(name=reply.ticket.name), metadata=token
        )
    finally:
        stack.stop()


def test_queue_length_and_wait_time(matched: Matched) -> None:
    stack = matched.stack
    assert _total(stack, "truc_lobby_ticket_wait_seconds_count") == 6
    assert _total(stack, "truc_lobby_ticket_wait_seconds_sum") > 0
    assert _total(stack, "truc_lobby_tables_seated_total") == 1
    # The seventh ticket waits: both replicas count it, from Redis.
    wait_until(
        lambda: all(s.value("truc_lobby_queued_tickets") == 1 for s in _scrape_all(stack)),
        timeout=10,
        what="the queue length on both replicas",
    )
    game = Samples(stack.game.metrics_url or "")
    assert game.value("truc_games_created_total") == 1


def test_lobby_rpcs_and_store_calls(matched: Matched) -> None:
    stack = matched.stack
    service = "truc.v1.LobbyService"
    count = "truc_rpc_duration_seconds_count"
    assert _total(stack, count, service=service, method="SignInGuest", code="OK") == 7
    assert _total(stack, count, service=service, method="CreateTicket", code="OK") == 7
    assert _total(stack, count, service=service, method="GetTicket", code="OK") >= 6
    assert _total(stack, "truc_redis_duration_seconds_count", op="create") == 7
    assert _total(stack, "truc_redis_duration_seconds_count", op="seat") == 1


def test_lobby_logs_are_json_lines_with_player_and_ticket(matched: Matched) -> None:
    lines = [line for lobby in matched.stack.lobbies for line in json_lines(lobby.log())]
    for line in lines:
        assert {"time", "level", "logger", "message"} <= line.keys(), line
    created = [
        line for line in lines if line.get("method") == "CreateTicket" and line["message"] == "rpc"
    ]
    assert len(created) == 7
    for line in created:
        assert line["player"] in matched.players
        assert "tickets/" + line["ticket"] in [*matched.tickets, matched.waiting[0]]
        assert line["code"] == "OK"
    assert any(line["message"] == "table seated" for line in lines)
