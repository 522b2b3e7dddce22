"""Rebuilding versions from the game's log (truc_game.history): every version's
events and the current state come back exactly as they were played, a log
read again replays only what is new, and a damaged log is INTERNAL, never a
wrong view. Pure use-case tests on the in-memory store."""

from __future__ import annotations

import asyncio
import random

import pytest

from truc_game import history
from truc_game.adapters.memory import MemoryGameStore
from truc_game.ports import Entry, GameLog
from truc_protocol.errors import Internal
from truc_rules.actions import SendDirective, SendSignal
from truc_rules.event_codec import decode_events
from truc_rules.events import Event
from truc_rules.registry import decode_state, encode_state, legal_actions

from .memory_games import LOBBY, PLAYERS, game_service, new_game, player

pytestmark = pytest.mark.unit


async def _played(actions: int) -> tuple[MemoryGameStore, list[tuple[Event, ...]], list[bytes]]:
    """g1 played ``actions`` random legal actions (messages included); the
    events and state of each version as they were applied."""
    store = MemoryGameStore()
    seen: list[tuple[Event, ...]] = []
    states: list[bytes] = []

    def record(_: str, entry: Entry) -> None:
        seen.append(decode_events(entry.events))
        states.append(entry.state)

    store.on_commit(record)
    game = game_service(store)
    await game.create_game(LOBBY, new_game())
    chooser = random.Random(5)
    for _ in range(actions):
        state = decode_state((await store.read("g1")).state)
        seat = state.to_act
        if seat is None:
            break
        moves = list(legal_actions(state, seat))
        if chooser.random() < 0.2:
            moves = [m for m in moves if isinstance(m, SendSignal | SendDirective)] or moves
        action = chooser.choice(moves)
        await game.submit_action(
            player(PLAYERS[seat]),
            "g1",
            action,
            etag="",
            request_id=str(chooser.random()),
        )
    return store, seen, states


def test_every_version_comes_back_as_it_was_played() -> None:
    async def scenario() -> None:
        store, seen, states = await _played(120)
        found = await history.read_history(store, "g1")
        assert list(found.events) == seen
        assert encode_state(found.state) == states[-1]
        entries = found.entries_after(40)
        assert [e.version for e in entries] == list(range(41, len(seen) + 1))
        assert [e.state for e in entries] == states[40:]
        assert [decode_events(e.events) for e in entries] == seen[40:]

    asyncio.run(scenario())


def test_reading_again_replays_only_the_new_actions_and_a_rewound_log_in_full() -> None:
    async def scenario() -> None:
        store, seen, states = await _played(60)
        log = await store.read_log("g1")
        short = GameLog(
            log.snapshot.__class__(30, states[29], log.snapshot.meta, None),
            log.first_state,
            log.first_events,
            log.first_deadline_ms,
            # A random match may end within 60 actions: its log is compacted then.
            log.records[: 29 * log.record_bytes],
            log.finished,
        )
        at_30 = history.replayed(short, "g1")  # an older read of the same game
        assert list(at_30.events) == seen[:30]
        full = history.replayed(log, "g1")  # extends the cached replay
        assert list(full.events) == seen and encode_state(full.state) == states[-1]
        back = history.replayed(short, "g1")  # Redis lost writes: the log is shorter
        assert list(back.events) == seen[:30] and encode_state(back.state) == states[29]

    asyncio.run(scenario())


def test_a_damaged_log_is_internal() -> None:
    async def scenario() -> None:
        store, _, _ = await _played(30)
        log = await store.read_log("g1")
        size = log.record_bytes
        cases = {
            "partial": log.records[:-3],
            "swapped": log.records[size : 2 * size] + log.records[:size] + log.records[2 * size :],
            "short": log.records[:-size],
        }
        for name, records in cases.items():
            history._CACHE.clear()
            damaged = GameLog(
                log.snapshot, log.first_state, log.first_events, log.first_deadline_ms, records
            )
            with pytest.raises(Internal) as error:
                history.replayed(damaged, "g1")
            assert error.value.reason == "CORRUPT_LOG", name

    asyncio.run(scenario())
