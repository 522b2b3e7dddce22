"""Absent seats through the real service (a Redis, game-service processes, gRPC
over sockets): a seat whose player missed TRUC_ABSENT_TURNS turns in a row is
played by the house at the short deadline TRUC_ABSENT_TURN_MS, until the
player's own action is accepted again (truc_game.absence).

Each test drives a game from a spectator's WatchGame stream: the present seats
act as soon as their turn comes, the absent seat never does (unless told to come
back), and every turn is timed from the version that gave it to the version that
ended it."""

from __future__ import annotations

import contextlib
import queue
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import grpc
import pytest
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from tests.cluster.conftest import RedisClusterNodes
from truc_dev_redis import RedisServer

from .conftest import (
    LOBBY_AUTH,
    SPECTATOR,
    Metadata,
    Replica,
    auth,
    running_replica,
    view_of,
)
from .sessions import MOVES

FRENCH = game_pb2.RULE_SET_FRENCH_TRUC
NORMAL_SECONDS = 2
"""The games' turn time: far from the absent seat's deadline, so a turn tells which it had."""
SHORT_MS = 300
"""TRUC_ABSENT_TURN_MS of the replicas whose tests need no default (faster runs)."""
POLL_MS = "50"
_ANSWERS = (game_pb2.CALL_PASS, game_pb2.CALL_FOLD, game_pb2.CALL_REFUSE, game_pb2.CALL_ACCEPT)


@dataclass(frozen=True)
class Turn:
    """One turn of one seat, as the spectator saw it."""

    seat: int
    version: int
    """The version that gave the seat its turn."""
    seconds: float
    """From that version's arrival to the next one's."""
    timed_out: bool
    """The next version began with TurnTimedOut for the seat (the house played it)."""
    shown_absent: bool
    """The version that gave the turn showed the seat absent (SeatInfo.absent)."""
    deadline_seconds: float
    """That version's deadline, from its arrival."""


def choose(view: game_pb2.GameView) -> game_pb2.Action:
    """A move for the seat to act: a card if it may play one, else an answer that
    ends the question, else any move (never a team message: it keeps the turn)."""
    moves = [a for a in view.legal_actions if a.WhichOneof("kind") in MOVES]
    for action in moves:
        if action.WhichOneof("kind") == "play_card":
            return action
    for answer in _ANSWERS:
        for action in moves:
            if action.WhichOneof("kind") == "call" and action.call == answer:
                return action
    return moves[0]


@dataclass
class Table:
    """A game, its players' tokens, and the seats whose players are away."""

    client: game_service_pb2_grpc.GameServiceStub
    name: str
    tokens: Sequence[Metadata]
    away: frozenset[int]
    turns: list[Turn] = field(default_factory=list)
    streams: dict[int, grpc.CallIterator[game_service_pb2.WatchGameResponse]] = field(
        default_factory=dict
    )
    """Each present seat's WatchGame stream (its views, legal actions included),
    while :meth:`play` runs."""

    def of(self, seat: int) -> list[Turn]:
        return [t for t in self.turns if t.seat == seat]

    def play(
        self,
        until: Callable[[Table], bool],
        *,
        start: tuple[game_pb2.GameView, float] | None = None,
        back: Callable[[Table], bool] = lambda table: False,
        come_back: Callable[[Table, game_pb2.GameView], None] | None = None,
        timeout: float = 90.0,
    ) -> None:
        """Watch and play until ``until``: each present seat acts at once (an
        away seat too when ``back`` says so, through ``come_back``, else
        SubmitAction); ``start`` is the version to begin from and when it
        arrived (else the game as read now)."""
        view, arrived = start or (view_of(self.client, self.name, SPECTATOR), time.monotonic())
        wall = time.time() - (time.monotonic() - arrived)
        request = game_service_pb2.WatchGameRequest(name=self.name, after_version=int(view.etag))
        stream = self.client.WatchGame(request, metadata=SPECTATOR, timeout=timeout)
        responses = iter(stream)
        try:
            while view.HasField("to_act"):
                seat = view.to_act
                if seat not in self.away:
                    self.submit(seat, self.seat_view(seat, int(view.etag)))
                elif back(self):
                    (come_back or Table.submit_for)(self, view)
                # The action's version (or the house's) is the next one on the stream.
                response = next(responses)
                now, now_wall = time.monotonic(), time.time()
                self.turns.append(
                    Turn(
                        seat,
                        int(view.etag),
                        now - arrived,
                        any(
                            e.HasField("turn_timed_out") and e.turn_timed_out.seat == seat
                            for e in response.events
                        ),
                        view.seats[seat].absent,
                        view.deadline.ToMilliseconds() / 1000 - wall,
                    )
                )
                view, arrived, wall = response.game, now, now_wall
                if until(self):
                    return
        finally:
            stream.cancel()  # type: ignore[no-untyped-call]
            self.close()

    def submit_for(self, view: game_pb2.GameView) -> None:
        """The seat to act in ``view`` acts (SubmitAction, on its view read now)."""
        self.submit(view.to_act, view_of(self.client, self.name, self.tokens[view.to_act]))

    def seat_view(self, seat: int, version: int) -> game_pb2.GameView:
        """``seat``'s view of ``version``, from its own WatchGame stream."""
        stream = self.streams.get(seat)
        if stream is None:
            request = game_service_pb2.WatchGameRequest(name=self.name, after_version=version - 1)
            stream = self.client.WatchGame(request, metadata=self.tokens[seat], timeout=120)
            self.streams[seat] = stream
        for response in stream:
            if response.version == version:
                return response.game
            assert response.version < version, (seat, response.version, version)
        raise AssertionError(f"seat {seat}'s stream ended before version {version}")

    def close(self) -> None:
        """Cancel the seats' streams."""
        for stream in self.streams.values():
            stream.cancel()  # type: ignore[no-untyped-call]
        self.streams.clear()

    def submit(self, seat: int, mine: game_pb2.GameView) -> None:
        self.client.SubmitAction(
            game_service_pb2.SubmitActionRequest(
                name=self.name, action=choose(mine), etag=mine.etag, request_id=uuid.uuid4().hex
            ),
            metadata=self.tokens[seat],
        )


def back_through_a_session(table: Table, view: game_pb2.GameView) -> None:
    """The player of the seat to act opens a Play session and makes a move on it."""
    seat = view.to_act
    requests: queue.Queue[game_service_pb2.PlayRequest | None] = queue.Queue()

    def written() -> Iterator[game_service_pb2.PlayRequest]:
        while (request := requests.get()) is not None:
            yield request

    requests.put(game_service_pb2.PlayRequest(open=game_service_pb2.OpenSession(name=table.name)))
    session = table.client.Play(written(), metadata=table.tokens[seat], timeout=10)
    try:
        answers = iter(session)
        first = next(answers)
        request_id = uuid.uuid4().hex
        requests.put(
            game_service_pb2.PlayRequest(
                action=game_service_pb2.SessionAction(
                    action=choose(first.game), etag=first.game.etag, request_id=request_id
                )
            )
        )
        answer = next(m for m in answers if m.request_id == request_id)
        assert not answer.HasField("refused"), answer
    finally:
        requests.put(None)
        session.cancel()  # type: ignore[no-untyped-call]


def new_table(
    client: game_service_pb2_grpc.GameServiceStub,
    *,
    seats: int,
    away: Sequence[int],
    options: game_pb2.RuleOptions | None = None,
    turn_seconds: int = NORMAL_SECONDS,
) -> tuple[Table, tuple[game_pb2.GameView, float]]:
    """A new game (random deals) and the version it starts at, timed."""
    tag = uuid.uuid4().hex[:8]
    players = [f"{tag}-p{seat}" for seat in range(seats)]
    request = game_service_pb2.CreateGameRequest(
        players=players, options=options, turn_seconds=turn_seconds
    )
    created = client.CreateGame(request, metadata=LOBBY_AUTH)
    start = (created.game, time.monotonic())
    return Table(client, created.name, [auth(p) for p in players], frozenset(away)), start


def missed(count: int, seat: int) -> Callable[[Table], bool]:
    """Until ``seat`` has had ``count`` turns."""
    return lambda table: len(table.of(seat)) >= count


def assert_normal(turn: Turn, turn_seconds: float = NORMAL_SECONDS) -> None:
    """A turn that waited the game's turn time, then was played by the house."""
    assert turn.timed_out, turn
    assert not turn.shown_absent, turn
    assert turn.seconds >= turn_seconds - 0.1, turn
    assert turn.deadline_seconds >= turn_seconds - 0.2, turn


def assert_short(turn: Turn, short_seconds: float) -> None:
    """A turn of an absent seat: the house played it at the short deadline."""
    assert turn.timed_out, turn
    assert turn.shown_absent, turn
    assert short_seconds - 0.1 <= turn.seconds <= short_seconds + 0.5, turn
    assert turn.deadline_seconds <= short_seconds + 0.05, turn


def assert_taken_over(turns: Sequence[Turn], after: int, turn_seconds: float) -> None:
    """The first ``after`` turns waited the turn time; the house played the
    rest at the short deadline (SHORT_MS)."""
    for turn in turns[:after]:
        assert_normal(turn, turn_seconds)
    for turn in turns[after:]:
        assert_short(turn, SHORT_MS / 1000)


def french_table(
    client: game_service_pb2_grpc.GameServiceStub, *, away: Sequence[int]
) -> tuple[Table, tuple[game_pb2.GameView, float]]:
    """A two-seat game (french_truc) with one-second turns."""
    options = game_pb2.RuleOptions(rule_set=FRENCH)
    return new_table(client, seats=2, away=away, options=options, turn_seconds=1)


@pytest.fixture(scope="module")
def own_redis() -> Iterator[RedisServer]:
    """This module's Redis: only its replicas sweep its deadlines, with its settings."""
    with RedisServer() as server:
        yield server


@pytest.fixture(scope="module")
def client(own_redis: RedisServer) -> Iterator[game_service_pb2_grpc.GameServiceStub]:
    """A replica with the default absence settings (3 turns, 1000 ms)."""
    with running_replica(own_redis.url, TRUC_DEADLINE_POLL_MS=POLL_MS) as replica:
        channel = grpc.insecure_channel(replica.address)
        yield game_service_pb2_grpc.GameServiceStub(channel)
        channel.close()
        assert "Traceback" not in replica.log(), replica.log()


# ------------------------------------------------------------------ six seats


def test_a_seat_that_missed_three_turns_is_played_within_a_second_until_its_player_acts(
    client: game_service_pb2_grpc.GameServiceStub,
) -> None:
    table, start = new_table(client, seats=6, away=[2])
    table.play(missed(5, 2), start=start)
    first, second, third, fourth, fifth = table.of(2)
    for turn in (first, second, third):
        assert_normal(turn)
    for turn in (fourth, fifth):  # absent: the default TRUC_ABSENT_TURN_MS
        assert_short(turn, 1.0)
    assert all(not t.timed_out and t.seconds < 1.0 for t in table.turns if t.seat != 2)
    # GetGame (rebuilt from the log) says so too, to every reader.
    for reader in (SPECTATOR, table.tokens[2], table.tokens[3]):
        seats = view_of(client, table.name, reader).seats
        assert [s.absent for s in seats] == [False, False, True, False, False, False]

    # The player comes back: its next turn it acts itself (SubmitAction) ...
    table.play(missed(6, 2), back=missed(5, 2))
    returned = table.of(2)[5]
    assert not returned.timed_out and returned.shown_absent
    assert not any(s.absent for s in view_of(client, table.name, SPECTATOR).seats)
    # ... and leaves again: its next turn waits the whole turn time.
    table.play(missed(7, 2))
    assert_normal(table.of(2)[6])


# ------------------------------------------------------------------ two seats


@pytest.fixture(scope="module")
def quick(own_redis: RedisServer) -> Iterator[Replica]:
    """A second replica on the same Redis (both sweep it), with the same absence
    settings as the first: the tests below run on either."""
    with running_replica(own_redis.url, TRUC_DEADLINE_POLL_MS=POLL_MS) as replica:
        yield replica


def test_a_two_seat_game_takes_over_the_absent_seat_and_a_session_action_brings_it_back(
    quick: Replica,
) -> None:
    with grpc.insecure_channel(quick.address) as channel:
        stub = game_service_pb2_grpc.GameServiceStub(channel)
        table, start = new_table(
            stub, seats=2, away=[1], options=game_pb2.RuleOptions(rule_set=FRENCH)
        )
        table.play(missed(4, 1), start=start)
        first, second, third, fourth = table.of(1)
        for turn in (first, second, third):
            assert_normal(turn)
        assert_short(fourth, 1.0)
        # Back through a Play session: opening it is not acting; the move is.
        table.play(missed(5, 1), back=missed(4, 1), come_back=back_through_a_session)
        returned = table.of(1)[4]
        assert not returned.timed_out and returned.shown_absent
        table.play(missed(6, 1))
        assert_normal(table.of(1)[5])


# ------------------------------------------------------------------ persistence


def test_the_missed_turns_survive_a_replica_restart() -> None:
    """Two turns missed on one replica, one more on the next: the seat is absent."""
    with RedisServer() as redis_server:
        first = Replica(redis_server.url, TRUC_DEADLINE_POLL_MS=POLL_MS)
        try:
            with grpc.insecure_channel(first.address) as channel:
                stub = game_service_pb2_grpc.GameServiceStub(channel)
                table, start = new_table(
                    stub, seats=2, away=[0], options=game_pb2.RuleOptions(rule_set=FRENCH)
                )
                table.play(missed(2, 0), start=start)
        finally:
            first.kill()  # as in a crash: nothing of the game's is kept but in Redis
            first.stop()
        with (
            running_replica(redis_server.url, TRUC_DEADLINE_POLL_MS=POLL_MS) as second,
            grpc.insecure_channel(second.address) as channel,
        ):
            table.client = game_service_pb2_grpc.GameServiceStub(channel)
            table.play(missed(4, 0))
        missed_turns = table.of(0)
        assert all(t.timed_out for t in missed_turns)
        for turn in missed_turns[:2]:
            assert_normal(turn)
        assert not missed_turns[2].shown_absent  # the third (timed from the restart)
        assert_short(missed_turns[3], 1.0)


# ------------------------------------------------------------------ settings


@contextlib.contextmanager
def alone(**env: str) -> Iterator[game_service_pb2_grpc.GameServiceStub]:
    """A replica with ``env`` on a Redis of its own (no other replica sweeps it)."""
    with (
        RedisServer() as redis_server,
        running_replica(redis_server.url, TRUC_DEADLINE_POLL_MS=POLL_MS, **env) as replica,
        grpc.insecure_channel(replica.address) as channel,
    ):
        yield game_service_pb2_grpc.GameServiceStub(channel)


def test_the_absence_settings_are_honoured_and_zero_turns_means_never() -> None:
    with alone(TRUC_ABSENT_TURNS="2", TRUC_ABSENT_TURN_MS=str(SHORT_MS)) as stub:
        table, start = french_table(stub, away=[1])
        table.play(missed(4, 1), start=start)
        assert_taken_over(table.of(1), 2, 1)
    with alone(TRUC_ABSENT_TURNS="0", TRUC_ABSENT_TURN_MS=str(SHORT_MS)) as stub:
        table, start = french_table(stub, away=[1])
        table.play(missed(5, 1), start=start)
        assert_taken_over(table.of(1), 5, 1)


def test_a_game_everyone_left_is_played_out_at_the_short_deadline() -> None:
    """Nobody acts: once both seats missed their turns, the house plays every
    turn at TRUC_ABSENT_TURN_MS (the match ends in minutes, not hours)."""
    with alone(TRUC_ABSENT_TURN_MS=str(SHORT_MS)) as stub:
        table, start = french_table(stub, away=[0, 1])
        table.play(lambda t: len(t.of(0)) >= 6 and len(t.of(1)) >= 6, start=start)
        for seat in (0, 1):
            assert_taken_over(table.of(seat), 3, 1)


# ------------------------------------------------------------------ Redis Cluster


def test_absent_seats_on_a_redis_cluster() -> None:
    cluster = RedisClusterNodes()
    try:
        with (
            running_replica(
                cluster.url, TRUC_DEADLINE_POLL_MS=POLL_MS, TRUC_ABSENT_TURN_MS=str(SHORT_MS)
            ) as replica,
            grpc.insecure_channel(replica.address) as channel,
        ):
            stub = game_service_pb2_grpc.GameServiceStub(channel)
            table, start = french_table(stub, away=[1])
            table.play(missed(5, 1), start=start)
            assert_taken_over(table.of(1), 3, 1)
            assert view_of(stub, table.name, SPECTATOR).seats[1].absent
    finally:
        cluster.stop()
