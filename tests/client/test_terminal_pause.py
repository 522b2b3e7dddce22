"""The terminal seat at the end of a hand: the hand's summary, then a pause
before the next hand is told (plain output: ``--hand-pause`` seconds; a live
terminal: until Enter, never longer than the human's running turn allows).

Pure: the seat reads a stand-in of its session (as in test_terminal_rewind)."""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import AsyncIterator, Sequence
from typing import cast

import pytest
from rich.console import Console
from truc.v1 import game_pb2

from truc_client.session import GameSession, Update
from truc_client.terminal import Seat

pytestmark = pytest.mark.unit

HAND_OVER = (
    game_pb2.Event(
        points_credited=game_pb2.PointsCredited(
            team=game_pb2.TEAM_B,
            points=1,
            reason=game_pb2.CREDIT_REASON_HAND,
            scores=game_pb2.Score(team_a=3, team_b=4),
        )
    ),
    game_pb2.Event(
        hand_ended=game_pb2.HandEnded(
            hand_number=1, winner=game_pb2.TEAM_B, how=game_pb2.HAND_END_TRICKS
        )
    ),
    game_pb2.Event(hand_started=game_pb2.HandStarted(hand_number=2, dealer=2, eldest=3, manche=1)),
)


def view(version: int, to_act: int = 1, deadline: float = 0.0) -> game_pb2.GameView:
    shown = game_pb2.GameView(
        name="games/g1", seat=0, etag=str(version), phase=game_pb2.PHASE_PLAY, to_act=to_act
    )
    if deadline:
        shown.deadline.FromSeconds(int(deadline))
    return shown


class Session:
    def __init__(self, updates: Sequence[Update]) -> None:
        self.updates = updates
        self.view: game_pb2.GameView | None = None

    async def _updates(self) -> AsyncIterator[Update]:
        for update in self.updates:
            yield update

    def __aiter__(self) -> AsyncIterator[Update]:
        return self._updates()


def seat(session: Session, *, live: bool, pause: float) -> tuple[Seat, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, width=100, color_system=None)
    table = Seat(
        cast(GameSession, session),
        view(1),
        console=console,
        live=live,
        labels={},
        hand_pause=pause,
    )
    return table, out


def test_plain_output_prints_the_summary_then_pauses_before_the_next_hand() -> None:
    session = Session([Update(2, 2, view(2), events=HAND_OVER)])
    table, out = seat(session, live=False, pause=0.4)
    started = time.monotonic()
    asyncio.run(table._watch())
    assert time.monotonic() - started >= 0.4
    lines = out.getvalue().splitlines()
    summary = lines.index("  hand 1 to team B on tricks: team B +1 (hand)")
    assert lines[summary + 1] == "  points A 3 - B 4 · manches A 0 - B 0"
    assert summary < next(i for i, line in enumerate(lines) if line.startswith("── hand 2"))


def test_a_live_terminal_waits_for_enter_and_leaves_the_turn_its_time() -> None:
    """The next hand is the human's turn, 10 s left: the pause waits at most
    10 - 8 = 2 s; Enter ends it at once."""

    async def scenario() -> tuple[list[str], float]:
        soon = time.time() + 10
        session = Session([Update(2, 2, view(2, to_act=0, deadline=soon), events=HAND_OVER)])
        table, _ = seat(session, live=True, pause=0.0)
        watching = asyncio.create_task(table._watch())
        for _ in range(200):  # the summary is up within 2 s
            if table._go_on is not None:
                break
            await asyncio.sleep(0.01)
        assert table._go_on is not None, "no pause at the end of the hand"
        shown = list(table._summary)
        started = time.monotonic()
        await table._handle("")  # Enter
        await asyncio.wait_for(watching, 1)
        return shown, time.monotonic() - started

    shown, waited = asyncio.run(scenario())
    assert shown[0] == "hand 1 to team B on tricks: team B +1 (hand)"
    assert shown[-1] in (
        "press Enter for the next hand (or wait 2 s)",
        "press Enter for the next hand (or wait 1 s)",
    )
    assert waited < 0.5


def test_versions_handed_over_together_still_pause_after_every_hand_but_the_last() -> None:
    """A session that fell behind hands several versions over as one update,
    the match's end among them (``over``): hand 1 still pauses, the last not."""
    last = (
        game_pb2.Event(
            hand_ended=game_pb2.HandEnded(
                hand_number=2, winner=game_pb2.TEAM_A, how=game_pb2.HAND_END_TRICKS
            )
        ),
        game_pb2.Event(match_ended=game_pb2.MatchEnded(winner=game_pb2.TEAM_B)),
    )
    finished = game_pb2.GameView(name="games/g1", seat=0, etag="9", finished=True)
    session = Session([Update(9, 2, finished, events=(*HAND_OVER, *last))])
    table, out = seat(session, live=False, pause=0.4)
    started = time.monotonic()
    asyncio.run(table._watch())
    assert 0.4 <= time.monotonic() - started < 0.8
    assert "  hand 1 to team B on tricks: team B +1 (hand)" in out.getvalue().splitlines()
