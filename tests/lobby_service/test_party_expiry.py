"""A party ticket its members never confirm expires, and frees its leader."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from truc.v1 import lobby_pb2, lobby_service_pb2

from truc_dev_redis import RedisServer

from .conftest import Stack, sign_in


@pytest.fixture(scope="module")
def quick_stack(redis_server: RedisServer) -> Iterator[Stack]:
    started = Stack(redis_server.url, TRUC_BOT_WAIT_SECONDS="0", TRUC_CONFIRM_SECONDS="1")
    yield started
    started.stop()


def test_an_unconfirmed_party_ticket_expires(quick_stack: Stack) -> None:
    lobby = quick_stack.lobby()
    leader, meta = sign_in(lobby, "leader")
    friend, _ = sign_in(lobby, "friend")
    ticket = lobby.CreateTicket(
        lobby_service_pb2.CreateTicketRequest(party=[friend]), metadata=meta
    ).ticket
    assert ticket.state == lobby_pb2.TICKET_STATE_AWAITING_CONFIRMATION
    deadline = time.monotonic() + 10
    while ticket.state != lobby_pb2.TICKET_STATE_EXPIRED and time.monotonic() < deadline:
        time.sleep(0.2)
        ticket = lobby.GetTicket(
            lobby_service_pb2.GetTicketRequest(name=ticket.name), metadata=meta
        ).ticket
    assert ticket.state == lobby_pb2.TICKET_STATE_EXPIRED, leader
    again = lobby.CreateTicket(lobby_service_pb2.CreateTicketRequest(), metadata=meta).ticket
    assert again.state == lobby_pb2.TICKET_STATE_QUEUED
