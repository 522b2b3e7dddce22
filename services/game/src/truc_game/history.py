"""Any version of a game, rebuilt on demand from what the store keeps.

The store keeps a game's first state and events, its current state and its
log (a :func:`~truc_game.ports.log_record` per action: the action in two bytes,
:mod:`truc_rules.action_codec`, the deadline it set and its request id's
digest), never the state of each version. The engine is deterministic, so replaying the log from
the first state (:func:`truc_rules.replay.replay`) gives back every version's
state and events exactly as they were first computed. This is what GetGame's
event log, a resumed watch or session, a repeated request's answer and a
finished match's replay are built from; the versions being played reach
watchers and sessions through the feed, never through here.

A log that does not replay to the stored current version is corrupt:
``INTERNAL``, never a wrong view.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from truc_protocol.errors import Internal, NotFound
from truc_rules.action_codec import ActionRecord, decode_records
from truc_rules.errors import InvalidSetup
from truc_rules.event_codec import decode_events, encode_events
from truc_rules.events import Event
from truc_rules.registry import AnyState, decode_state, encode_state
from truc_rules.replay import replay

from .absence import missed_by_action
from .ports import Entry, GameLog, GameMissing, GameStore, Reader, Snapshot, parse_record

__all__ = ["Replayed", "entries_after", "flattened", "read_history", "replayed"]


@dataclass(frozen=True, slots=True)
class Replayed:
    """A game's every version, rebuilt: its events and deadlines, and the
    current state (earlier states are replayed again when asked for)."""

    snapshot: Snapshot
    first_state: bytes
    records: bytes
    """The log this was replayed from."""
    record_bytes: int
    state: AnyState
    """The state of the last version."""
    events: tuple[tuple[Event, ...], ...]
    """The events of each version, version 1 first."""
    deadlines: tuple[int | None, ...]
    """The deadline each version set, version 1 first."""
    missed: tuple[tuple[int, ...], ...]
    """Each version's missed turns in a row per seat (:attr:`Entry.missed`),
    version 1 first."""

    @property
    def latest_version(self) -> int:
        return len(self.events)

    def states(self, first: int, last: int) -> Iterator[tuple[int, AnyState]]:
        """(version, state) of each version from ``first`` to ``last`` (within
        1 .. :attr:`latest_version`), oldest first: the log is replayed once,
        from version 1 to ``last`` (the actions after it are not)."""
        first = max(first, 1)
        last = min(last, self.latest_version)
        if first > last:
            return
        state = decode_state(self.first_state)
        if first == 1:
            yield 1, state
        actions = _actions(self.records, self.record_bytes)[: last - 1]
        for version, transition in enumerate(replay(state, actions), start=2):
            if version >= first:
                yield version, transition.state

    def entries_after(self, after_version: int) -> list[Entry]:
        """The versions after ``after_version`` as feed entries (without the
        request id that made each: the log keeps only its digest)."""
        return [
            Entry(
                version,
                encode_state(state),
                encode_events(self.events[version - 1]),
                self.deadlines[version - 1],
                missed=self.missed[version - 1],
            )
            for version, state in self.states(after_version + 1, self.latest_version)
        ]


_CACHE: Final[OrderedDict[str, Replayed]] = OrderedDict()
_CACHED_GAMES: Final = 128
"""Games whose replay this replica keeps (events, deadlines, the last state: tens
of KB each), so reading a game again replays only the actions since."""


def _actions(records: bytes, size: int) -> list[ActionRecord]:
    return decode_records(b"".join(records[at : at + 2] for at in range(0, len(records), size)))


def replayed(log: GameLog, game_id: str) -> Replayed:
    """Every version of the game in ``log`` (replaying only the actions after
    the ones this replica replayed last time, when the log still starts with
    them). Raises Internal when the log is corrupt (it does not replay to the
    stored version)."""
    records, size = log.records, log.record_bytes
    if len(records) % size:
        raise Internal("CORRUPT_LOG", f"the log of {game_id!r} ends in a partial record")
    cached = _CACHE.get(game_id)
    if (
        cached is not None
        and cached.record_bytes == size
        and cached.first_state == log.first_state
        and len(cached.records) <= len(records)
        and records.startswith(cached.records)
    ):
        done = len(cached.records)
        state = cached.state
        events = list(cached.events)
        deadlines = list(cached.deadlines)
        missed = list(cached.missed)
    else:
        done = 0
        state = None
        events = []
        deadlines = [log.first_deadline_ms]
        missed = [()]
    try:
        if state is None:
            state = decode_state(log.first_state)
            events.append(decode_events(log.first_events))
        fresh = records[done:]
        for at in range(0, len(fresh), size):
            deadlines.append(parse_record(fresh[at : at + size])[1])
        actions = _actions(fresh, size)
        missed.extend(missed_by_action(missed[-1], actions))
        for transition in replay(state, actions):
            state = transition.state
            events.append(transition.events)
    except InvalidSetup as exc:
        raise Internal("CORRUPT_LOG", f"the log of {game_id!r} is corrupt: {exc}") from None
    if len(events) != log.snapshot.version:
        raise Internal(
            "CORRUPT_LOG",
            f"the log of {game_id!r} replays to version {len(events)}, not {log.snapshot.version}",
        )
    found = Replayed(
        log.snapshot,
        log.first_state,
        records,
        size,
        state,
        tuple(events),
        tuple(deadlines),
        tuple(missed),
    )
    _CACHE[game_id] = found
    _CACHE.move_to_end(game_id)
    if len(_CACHE) > _CACHED_GAMES:
        _CACHE.popitem(last=False)
    return found


async def read_history(store: GameStore, game_id: str, reader: Reader | None = None) -> Replayed:
    """The game's every version. Raises NotFound; with a ``reader``, the
    store's RateLimited and NotSeated (checked before the log is read)."""
    try:
        log = await store.read_log(game_id, reader)
    except GameMissing:
        raise NotFound("GAME_NOT_FOUND", f"no game {game_id!r}") from None
    return replayed(log, game_id)


async def entries_after(store: GameStore, game_id: str, after_version: int) -> list[Entry]:
    """The game's versions after ``after_version``, oldest first (none if the
    game is gone)."""
    try:
        log = await store.read_log(game_id)
    except GameMissing:
        return []
    return replayed(log, game_id).entries_after(after_version)


def flattened(by_version: Iterable[tuple[int, Sequence[Event]]]) -> tuple[list[Event], list[int]]:
    """The events of some versions, given as (version, events), in one list,
    and the version of each."""
    events: list[Event] = []
    versions: list[int] = []
    for version, found in by_version:
        events.extend(found)
        versions.extend([version] * len(found))
    return events, versions
