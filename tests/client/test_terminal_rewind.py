"""The terminal seat after the store lost its last writes: the game is back a few
versions, and the seat must show the server's older view instead of holding on
to a version that no longer exists (and must not go back in ordinary races).

Pure: the seat talks to a stand-in of its session with what it uses here,
whose behaviour (versions in order, an older one only after a loss, marked
``rewound``) is :class:`~truc_client.session.GameSession`'s, tested in
``test_session_unit.py`` and against a real service in ``test_session.py``."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, cast

import grpc
import pytest
from rich.console import Console
from truc.v1 import game_pb2

from truc_client.choices import Choice
from truc_client.session import GameSession, StaleView, TrucError, Update
from truc_client.terminal import Seat

pytestmark = pytest.mark.unit


def view(version: int, to_act: int = 1) -> game_pb2.GameView:
    return game_pb2.GameView(
        name="games/g1", seat=0, etag=str(version), phase=game_pb2.PHASE_PLAY, to_act=to_act
    )


class Session:
    """What the seat asks of its session: its updates, acting, the latest view.

    ``watched``: the versions it yields; one below the one before it is
    ``rewound`` (the game went back), as the real session marks it."""

    def __init__(self, watched: Sequence[int], refused_with: int = 0) -> None:
        self.watched = watched
        self.refused_with = refused_with
        self.view: game_pb2.GameView | None = None
        self.meanwhile: Callable[[], None] = lambda: None
        """Runs before the first version is yielded (another task's doing)."""

    async def _updates(self) -> AsyncIterator[Update]:
        self.meanwhile()
        last = 0
        for version in self.watched:
            yield Update(version, version, view(version), rewound=version < last)
            last = version

    def __aiter__(self) -> AsyncIterator[Update]:
        return self._updates()

    async def act(self, action: Any, *, etag: str) -> Update:
        error = TrucError(grpc.StatusCode.ABORTED, "STALE_ETAG", "stale")
        raise StaleView(error, view(self.refused_with, to_act=0))


def seat(session: Session, version: int, to_act: int = 1) -> Seat:
    console = Console(file=io.StringIO(), width=100, color_system=None)
    return Seat(
        cast(GameSession, session), view(version, to_act), console=console, live=False, labels={}
    )


def test_a_session_that_follows_the_game_back_is_shown() -> None:
    table = seat(Session([6, 7, 5, 6]), 5)
    asyncio.run(table._watch())
    assert table.version == 6


def test_an_update_behind_the_seats_own_answer_does_not_take_it_back() -> None:
    """The seat's own action was answered with version 7 before the seat read
    the update of 6: 6 is old news, not a loss."""
    session = Session([6])
    table = seat(session, 5)
    session.meanwhile = lambda: table._set_view(view(7), 7)
    asyncio.run(table._watch())
    assert table.version == 7


def test_a_refusal_whose_view_is_older_than_the_etag_sent_is_adopted() -> None:
    """STALE_ETAG answered with version 4 to an action sent at version 6: the
    game went back (a published version is never behind the current one
    otherwise)."""
    table = seat(Session([], refused_with=4), 6, to_act=0)
    table.choices = (Choice(key="1", action=game_pb2.Action(), text="play"),)
    asyncio.run(table._handle("1"))
    assert table.version == 4
