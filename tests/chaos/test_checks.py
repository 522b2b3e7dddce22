"""The chaos suite's checker finds what it is meant to find (so a clean verdict is not
vacuous): a consistent, fabricated world passes, and each corruption of it (a gap
in a game's log, a log that does not replay to the stored state, a request applied
twice, a lost acknowledgement, a player in two games, a ticket stuck in
MATCHING...) is reported by the check that owns it.

The fabricated games are real: their logs are played by the rules engine and
written as the game service writes them (:func:`truc_game.ports.log_record`), so
the checks replay them as they replay a run's."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

import pytest

from truc_chaos.aof import Truncation
from truc_chaos.checks import CheckInput, check_all
from truc_chaos.records import Ack, Finish, Journal, TicketLog
from truc_chaos.store_state import Ended, GameState, StoreState, TicketState
from truc_chaos.views import replayed_digest
from truc_game.ports import RECORD_BYTES, finished_records, log_record, request_digest
from truc_lobby.history import GameRecord
from truc_rules.action_codec import encode_action
from truc_rules.event_codec import encode_events
from truc_rules.registry import AnyState, apply_action, encode_state, legal_actions, new_game
from truc_rules.truc_y_flou.options import RuleOptions

pytestmark = pytest.mark.unit

T0 = 1_800_000_000.0
"""Seconds: when the fabricated run started."""
PLAYERS = [f"p{i}-000000000000" for i in range(6)]
TURN = 3


@dataclass(frozen=True, slots=True)
class Played:
    """A match played by the engine: each version's state and who made it."""

    first_events: bytes
    states: list[AnyState]
    """Version 1 first."""
    moves: list[tuple[int, bytes]]
    """(seat, action log entry) of each version after the first."""


def _play(versions: int, seed: int = 7) -> Played:
    transition = new_game(RuleOptions(), seed=seed)
    states = [transition.state]
    moves: list[tuple[int, bytes]] = []
    for _ in range(versions - 1):
        state = states[-1]
        seat = state.to_act
        assert seat is not None
        action = legal_actions(state, seat)[0]
        states.append(apply_action(state, seat, action).state)
        moves.append((seat, encode_action(seat, action)))
    return Played(encode_events(transition.events), states, moves)


def _deadline(start: float, version: int) -> int:
    return int((start + 0.5 * (version - 1)) * 1000 + TURN * 1000)


def request_key(game: str, version: int, played: Played) -> str:
    """The request key (player NUL request id) that made ``version``."""
    seat = played.moves[version - 2][0]
    return f"{PLAYERS[seat]}\x00r-{game}-{version}"


def _game(
    game: str,
    start: float,
    end: float | None,
    version: int,
    *,
    deadlines: Mapping[int, int | None] | None = None,
) -> GameState:
    """A game created at ``start`` (s) whose versions come 0.5 s apart, finished at
    ``end`` (its last version sets no deadline) or live (its deadline pending at
    T0 + 100 s); ``deadlines`` overrides the deadline some versions set."""
    played = _play(version)
    set_by: dict[int, int | None] = {v: _deadline(start, v) for v in range(1, version + 1)}
    set_by[version] = None if end is not None else int((T0 + 100) * 1000)
    set_by.update(deadlines or {})
    log = b"".join(
        log_record(entry, set_by[v], request_key(game, v, played))
        for v, (_, entry) in enumerate(played.moves, start=2)
    )
    return GameState(
        game=game,
        version=version,
        players=tuple(PLAYERS),
        turn_seconds=TURN,
        deadline_ms=set_by[version],
        finished=end is not None,
        phase="MATCH_OVER" if end is not None else "PLAY",
        state=encode_state(played.states[-1]),
        first_state=encode_state(played.states[0]),
        first_events=played.first_events,
        first_deadline_ms=set_by[1],
        log=log,
        indexed_deadline=None if end is not None else (T0 + 100) * 1000,
        last_commit_ms=None if end is None else end * 1000,
    )


def world() -> CheckInput:
    """Two consecutive finished matches of the same six players, all recorded once."""
    store = StoreState(read_at=T0 + 90)
    journal = Journal(started=T0)
    matches = (("g1", T0 + 1, T0 + 20), ("g2", T0 + 25, T0 + 45))
    changes = {p: (16.0 if i % 2 == 0 else -16.0) for i, p in enumerate(PLAYERS)}
    played = _play(12)
    for index, (game, start, end) in enumerate(matches):
        stored = store.games[game] = _game(game, start, end, 12)
        store.ended[game] = [Ended(int(end * 1000), "")]
        store.ended_before.add(game)
        store.summaries[game] = GameRecord(
            game, tuple((s, p, False) for s, p in enumerate(PLAYERS)), 0, int(end * 1000), changes
        )
        for seat, player in enumerate(PLAYERS):
            ticket = f"t{index}{seat}"
            store.tickets[ticket] = TicketState(
                ticket,
                "MATCHED",
                (player,),
                game,
                tuple((s, p, False) for s, p in enumerate(PLAYERS)),
                int((start - 1) * 1000),
            )
            log = journal.tickets[f"tickets/{ticket}"] = TicketLog(
                f"tickets/{ticket}", player, "grpc", start - 1
            )
            log.state("QUEUED")
            log.state("MATCHED", f"games/{game}")
            watch = journal.watch(f"games/{game}", player, seat, "grpc")
            for version, state in enumerate(played.states, start=1):
                deadline = stored.first_deadline_ms if version == 1 else _set_by(stored, version)
                digest = replayed_digest(state, PLAYERS)
                watch.seen(version, deadline, start + 0.5 * version, digest)
        for version in range(2, 13):
            seat = played.moves[version - 2][0]
            journal.acks.append(
                Ack(
                    f"games/{game}",
                    PLAYERS[seat],
                    seat,
                    f"r-{game}-{version}",
                    version,
                    start + 0.5 * version,
                    "grpc",
                )
            )
    for player in PLAYERS:
        store.history[player] = ["g1", "g2"]
        store.ratings[player] = 1500.0 + 2 * changes[player]
        journal.players[player] = "token"
    listed = {player: ["games/g2", "games/g1"] for player in PLAYERS}
    health = {"game0": "SERVING", "lobby0": "SERVING", "gateway": "SERVING", "redis": "SERVING"}
    return CheckInput(store, journal, listed=listed, health=health)


def _set_by(game: GameState, version: int) -> int | None:
    """The deadline ``version``'s record keeps."""
    at = (version - 2) * RECORD_BYTES
    return int.from_bytes(game.log[at + 2 : at + 8], "big") or None


def found(data: CheckInput) -> set[str]:
    violations, _ = check_all(data)
    return {v.check for v in violations}


def test_a_consistent_world_passes() -> None:
    violations, excused = check_all(world())
    assert violations == []
    assert excused == []


def test_a_finished_game_s_compacted_log_is_read_in_its_own_record_size() -> None:
    data = world()
    for game in data.store.games.values():  # as the commit that ends a game leaves it
        game.log, game.compacted = finished_records(game.log), True
    assert check_all(data)[0] == []
    data = world()
    data.store.games["g1"].compacted = True  # said compacted, but 16-byte records
    assert found(data) == {"log-corrupt"}


def _gap(w: CheckInput) -> None:
    game = w.store.games["g1"]
    game.log = game.log[: 4 * RECORD_BYTES] + game.log[5 * RECORD_BYTES :]


def _partial_record(w: CheckInput) -> None:
    w.store.games["g1"].log += b"\x00"


def _log_refused(w: CheckInput) -> None:
    """Two actions swapped: the second one's seat is not the seat to act."""
    game = w.store.games["g1"]
    records = [game.log[at : at + RECORD_BYTES] for at in range(0, len(game.log), RECORD_BYTES)]
    records[3], records[4] = records[4], records[3]
    game.log = b"".join(records)


def _replay_mismatch(w: CheckInput) -> None:
    """The stored current state is not where the log leads (a commit wrote the
    state and lost the record, or the reverse)."""
    game = w.store.games["g2"]
    game.state = encode_state(_play(11).states[-1])


def _deadline_mismatch(w: CheckInput) -> None:
    w.store.games["g2"].deadline_ms = int((T0 + 44) * 1000)


def _request_digest(game: GameState, version: int, digest: bytes) -> None:
    at = (version - 2) * RECORD_BYTES + RECORD_BYTES - 8
    game.log = game.log[:at] + digest + game.log[at + 8 :]


def _applied_twice(w: CheckInput) -> None:
    first = w.journal.acks[0]
    w.journal.acks.append(replace(first, version=first.version + 1))


def _one_request_in_two_records(w: CheckInput) -> None:
    game = w.store.games["g1"]
    _request_digest(game, 6, game.log[4 * RECORD_BYTES - 8 : 4 * RECORD_BYTES])  # version 5's


def _lost_ack(w: CheckInput) -> None:
    _request_digest(w.store.games["g2"], 7, bytes(8))  # as if a deadline had made it


def _two_games(w: CheckInput) -> None:
    # g2 starts while g1 is still live: its players were seated twice.
    w.store.games["g2"] = _game("g2", T0 + 10, T0 + 45, 12)


def _stuck_matching(w: CheckInput) -> None:
    w.store.tickets["t00"] = replace(w.store.tickets["t00"], state="MATCHING", game="")


def _orphan(w: CheckInput) -> None:
    w.store.games["g3"] = _game("g3", T0 + 50, None, 4)


def _rating_twice(w: CheckInput) -> None:
    w.store.ratings[PLAYERS[0]] += 16.0


def _history_duplicate(w: CheckInput) -> None:
    w.listed[PLAYERS[1]] = ["games/g2", "games/g1", "games/g1"]


def _result_missing(w: CheckInput) -> None:
    del w.store.summaries["g2"]
    for player in PLAYERS:
        w.store.history[player] = ["g1"]
        w.store.ratings[player] -= 16.0 if PLAYERS.index(player) % 2 == 0 else -16.0
    w.listed = {p: ["games/g1"] for p in PLAYERS}


def _watch_gap(w: CheckInput) -> None:
    del w.journal.watches[("games/g1", PLAYERS[0])].epochs[0][3]


def _watch_shown_another_state(w: CheckInput) -> None:
    """A watcher shown, under version 5, what version 6 is (its deadline right)."""
    epoch = w.journal.watches[("games/g1", PLAYERS[0])].epochs[0]
    epoch[4] = replace(epoch[4], digest=epoch[5].digest)


def _watch_duplicate(w: CheckInput) -> None:
    epoch = w.journal.watches[("games/g1", PLAYERS[0])].epochs[0]
    epoch.insert(4, epoch[3])


def _rewind_without_crash(w: CheckInput) -> None:
    log = w.journal.watches[("games/g2", PLAYERS[0])]
    log.rewind(12, 8, at=T0 + 40)
    for seen in log.epochs[0]:
        log.epochs[-1].append(seen)


def _stuck_game(w: CheckInput) -> None:
    overdue = int((T0 + 60) * 1000)  # 30 s overdue when Redis was read
    game = w.store.games["g2"] = _game("g2", T0 + 25, None, 12, deadlines={12: overdue})
    game.indexed_deadline = float(overdue)
    del w.store.ended["g2"]
    w.store.ended_before.discard("g2")


def _end_unannounced(w: CheckInput) -> None:
    del w.store.ended["g1"]


def _ended_twice(w: CheckInput) -> None:
    w.store.ended["g1"].append(w.store.ended["g1"][0])


def _end_wrong_winner(w: CheckInput) -> None:
    w.store.ended["g1"] = [Ended(int((T0 + 20) * 1000), "A")]


def _end_of_unfinished_game(w: CheckInput) -> None:
    w.store.games["g3"] = _game("g3", T0 + 50, None, 4)
    w.store.ended["g3"] = [Ended(int((T0 + 60) * 1000), "B")]
    w.store.ended_before.add("g3")


def _vanished(w: CheckInput) -> None:
    w.journal.note(PLAYERS[0], "game gone", "games/g2: NOT_FOUND")


def _unhealthy(w: CheckInput) -> None:
    w.health["lobby0"] = "NOT_SERVING"


CORRUPTIONS: dict[str, tuple[Callable[[CheckInput], None], str]] = {
    "a gap in a game's log": (_gap, "log-gap"),
    "a log ending in a partial record": (_partial_record, "log-corrupt"),
    "a log the rules refuse": (_log_refused, "log-corrupt"),
    "a log that does not replay to the stored state": (_replay_mismatch, "log-replay-mismatch"),
    "a game's deadline not the one its log set": (_deadline_mismatch, "deadline-mismatch"),
    "one request id acknowledged with two versions": (_applied_twice, "applied-twice"),
    "one request id making two versions": (_one_request_in_two_records, "applied-twice"),
    "an acknowledged action missing from the log": (_lost_ack, "lost-ack"),
    "a finished game not in the ended-games stream": (_end_unannounced, "end-unannounced"),
    "a game ended twice": (_ended_twice, "ended-twice"),
    "an ended-games entry with the wrong winner": (_end_wrong_winner, "end-wrong-winner"),
    "an unfinished game in the ended-games stream": (
        _end_of_unfinished_game,
        "end-of-unfinished-game",
    ),
    "players seated in two live games": (_two_games, "two-live-games"),
    "a ticket stuck in MATCHING": (_stuck_matching, "ticket-stuck-matching"),
    "a game no ticket was seated in": (_orphan, "orphan-game"),
    "a result applied twice to a rating": (_rating_twice, "rating-mismatch"),
    "ListGames listing a game twice": (_history_duplicate, "history-duplicate"),
    "a finished game without its result": (_result_missing, "result-missing"),
    "a watcher that missed a version": (_watch_gap, "watch-gap"),
    "a watcher that got a version twice": (_watch_duplicate, "watch-duplicate"),
    "a watcher shown another state under a version": (_watch_shown_another_state, "watch-diverged"),
    "a game going backward with no crash": (_rewind_without_crash, "rewind-without-crash"),
    "an unfinished game nobody acts in": (_stuck_game, "game-stuck"),
    "a game gone with no crash": (_vanished, "game-vanished"),
    "a process not healthy at the end": (_unhealthy, "unhealthy"),
}


@pytest.mark.parametrize("what", list(CORRUPTIONS))
def test_each_corruption_is_reported_by_its_check(what: str) -> None:
    corrupt, check = CORRUPTIONS[what]
    data = copy.deepcopy(world())
    corrupt(data)
    assert check in found(data), f"{what}: {check} not reported"


def test_a_ticket_stuck_matching_names_its_players_and_the_lobby() -> None:
    data = world()
    _stuck_matching(data)
    violations, _ = check_all(data)
    stuck = [v for v in violations if v.check == "ticket-stuck-matching"]
    assert len(stuck) == 1
    assert stuck[0].subject == "tickets/t00"
    assert PLAYERS[0] in stuck[0].detail
    assert stuck[0].component.startswith("lobby")


def test_a_loss_inside_a_crash_window_is_excused_and_outside_it_is_not() -> None:
    ack = next(a for a in world().journal.acks if a.game == "games/g2" and a.version == 7)
    inside = world()
    _lost_ack(inside)
    inside.journal.truncations.append(
        Truncation(
            killed_at=ack.at + 0.5,
            cut_to_at=ack.at - 0.5,
            file="x",
            size_before=9,
            size_after=5,
            back_at=ack.at + 1.0,
        )
    )
    violations, excused = check_all(inside)
    assert "lost-ack" not in {v.check for v in violations}
    assert [e.check for e in excused] == ["lost-ack"]
    outside = world()
    _lost_ack(outside)
    outside.journal.truncations.append(
        Truncation(
            killed_at=ack.at - 1.0,
            cut_to_at=ack.at - 2.0,
            file="x",
            size_before=9,
            size_after=5,
            back_at=ack.at - 0.5,
        )
    )
    assert "lost-ack" in found(outside)  # acknowledged after the crash: it had to last


def test_a_watcher_keeping_versions_a_crash_rewrote_is_excused_and_counted() -> None:
    data = world()
    watch = data.journal.watches[("games/g2", PLAYERS[2])]
    crash = watch.epochs[0][9].at + 0.1  # every watcher had seen versions 9 and 10
    data.journal.truncations.append(Truncation(crash, crash - 1.0, "x", 9, 5, back_at=crash + 0.1))
    game = data.store.games["g2"]
    rewritten = {v: (_set_by(game, v) or 0) + 777 for v in (9, 10)}
    # Rewritten after the crash: other deadlines under the same numbers.
    data.store.games["g2"] = _game("g2", T0 + 25, T0 + 45, 12, deadlines=rewritten)
    violations, excused = check_all(data)
    assert not [v for v in violations if v.check.startswith("watch")]
    assert "watch-kept-lost-versions" in {e.check for e in excused}
    # Seen after the crash, a version the log does not hold is a violation.
    late = watch.epochs[0][9]
    watch.epochs[0][9] = replace(late, at=crash + 1.0)
    assert "watch-diverged" in found(data)


def test_an_ack_of_a_game_gone_after_its_retention_is_no_loss() -> None:
    """The soak keeps finished games 60 s: a game seen finished longer ago than
    that may be gone. One gone sooner, or never seen finished, was lost."""
    data = world()
    del data.store.games["g1"]
    assert "lost-ack" in found(data)
    data.finished_ttl_seconds = 60
    assert "lost-ack" in found(data)  # nobody saw it finish
    data.journal.finishes.append(Finish("games/g1", PLAYERS[0], T0 + 20))
    assert "lost-ack" not in found(data)  # finished at +20 s, read at +90 s
    data.finished_ttl_seconds = 80
    assert "lost-ack" in found(data)  # it should still be there


def _record(
    game: GameState, version: int, *, entry: bytes | None = None, request: str = ""
) -> None:
    """Rewrite ``version``'s record: another action entry, or another request's digest."""
    at = (version - 2) * RECORD_BYTES
    old = game.log[at : at + RECORD_BYTES]
    new = (entry or old[:2]) + old[2:8] + (request_digest(request) if request else old[8:])
    game.log = game.log[:at] + new + game.log[at + RECORD_BYTES :]


def test_a_log_that_does_not_replay_to_the_stored_state_is_reported() -> None:
    """The last record replaced by another action the rules accept there: the log
    still decodes and replays, but not to the state the game stores."""
    data = world()
    played = _play(12)
    seat, entry = played.moves[-1]
    other = next(
        a for a in legal_actions(played.states[-2], seat) if encode_action(seat, a) != entry
    )
    _record(data.store.games["g2"], 12, entry=encode_action(seat, other))
    violations, _ = check_all(data)
    replays = [v for v in violations if v.check == "log-replay-mismatch"]
    assert [v.subject for v in replays] == ["games/g2"]
    assert replays[0].component == "game service (commit script)"
    assert "other than the stored state" in replays[0].detail
    assert "log-replay-mismatch" not in found(world())


def test_an_ack_of_a_version_another_seat_or_a_deadline_made_is_lost() -> None:
    ack = next(a for a in world().journal.acks if a.game == "games/g2" and a.version == 7)
    key = f"{ack.player}\x00{ack.request_id}"
    # The version's record holds the request's digest, but as a deadline's action.
    data = world()
    game = data.store.games["g2"]
    seat, entry = _play(12).moves[5]
    assert seat == ack.seat
    _record(game, 7, entry=bytes((entry[0] | 0x08,)) + entry[1:], request=key)
    lost = [v.detail for v in check_all(data)[0] if v.check == "lost-ack"]
    assert len(lost) == 1 and "the service at a deadline for seat" in lost[0]
    # Another player's ack that names this version and whose digest it holds.
    data = world()
    other = PLAYERS[(ack.seat + 1) % 6]
    data.journal.acks.remove(ack)
    data.journal.acks.append(replace(ack, player=other, seat=(ack.seat + 1) % 6))
    _record(data.store.games["g2"], 7, request=f"{other}\x00{ack.request_id}")
    lost = [v.detail for v in check_all(data)[0] if v.check == "lost-ack"]
    assert len(lost) == 1 and f"not of the player's seat {(ack.seat + 1) % 6}" in lost[0]
