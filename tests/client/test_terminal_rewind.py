"""The terminal seat after the store lost its last writes: the game is back a few
versions, and the seat must show the server's older view instead of holding on
to a version that no longer exists (and must not go back in ordinary races).

Pure: the seat talks to a stand-in with the two methods it calls here, whose
behaviour (versions in order, an older one only after a loss) is
:class:`~truc_client.client.TrucClient`'s, tested against a real service in
``test_rewind.py``."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any, cast

import grpc
import pytest
from rich.console import Console
from truc.v1 import game_pb2, game_service_pb2

from truc_client.choices import Choice
from truc_client.client import StaleView, TrucClient, TrucError
from truc_client.terminal import Seat

pytestmark = pytest.mark.unit


def view(version: int, to_act: int = 1) -> game_pb2.GameView:
    return game_pb2.GameView(
        name="games/g1", seat=0, etag=str(version), phase=game_pb2.PHASE_PLAY, to_act=to_act
    )


class Client:
    """What the seat asks of its client: a watch and a submit."""

    def __init__(self, watched: Sequence[int], refused_with: int = 0) -> None:
        self.watched = watched
        self.refused_with = refused_with
        self.meanwhile: Callable[[], None] = lambda: None
        """Runs before the first version is yielded (another task's doing)."""

    async def watch_game(
        self, name: str, after_version: int = 0
    ) -> AsyncGenerator[game_service_pb2.WatchGameResponse, None]:
        self.meanwhile()
        for version in self.watched:
            yield game_service_pb2.WatchGameResponse(version=version, game=view(version))

    async def submit(self, name: str, action: Any, *, etag: str) -> Any:
        error = TrucError(grpc.StatusCode.ABORTED, "STALE_ETAG", "stale")
        raise StaleView(error, view(self.refused_with, to_act=0))


def seat(client: Client, version: int, to_act: int = 1) -> Seat:
    console = Console(file=io.StringIO(), width=100, color_system=None)
    return Seat(
        cast(TrucClient, client), view(version, to_act), console=console, live=False, labels={}
    )


def test_a_watch_that_follows_the_game_back_is_shown() -> None:
    table = seat(Client([6, 7, 5, 6]), 5)
    asyncio.run(table._watch())
    assert table.version == 6


def test_a_watch_behind_the_seats_own_reply_does_not_take_it_back() -> None:
    """The seat's own SubmitAction answered version 7 before the watch delivered
    6: 6 is old news, not a loss."""
    client = Client([6])
    table = seat(client, 5)
    client.meanwhile = lambda: table._set_view(view(7), 7)
    asyncio.run(table._watch())
    assert table.version == 7


def test_a_refusal_whose_view_is_older_than_the_etag_sent_is_adopted() -> None:
    """STALE_ETAG answered with version 4 to an action sent at version 6: the
    game went back (a published version is never behind the current one
    otherwise)."""
    table = seat(Client([], refused_with=4), 6, to_act=0)
    table.choices = (Choice(key="1", action=game_pb2.Action(), text="play"),)
    asyncio.run(table._handle("1"))
    assert table.version == 4
