"""What a commit publishes on the game's channel: the version itself.

Every replica's feed (:mod:`.redis_feed`) hands a published version to its
watchers and sessions without reading it back from Redis. The commit script
(:mod:`.redis_store`) publishes, in the same atomic step that writes the
version::

    <version> LF <deadline ms or empty> LF <missed turns> LF <len(request)> LF <request>
    <len(state)> LF <state> <events>

``missed turns`` is each seat's count of turns in a row played at its deadline,
one character per seat, seat 0 first: ``'0'`` plus the count (empty: none;
:mod:`truc_game.absence`). The script writes the first three fields (it
resolves a kept deadline, and an absent seat's short one); the rest,
the :func:`tail`, is built here from what the committing replica already has.
``request`` is the request key of the action (player NUL request id, or empty).
"""

from __future__ import annotations

from truc_game.absence import missed_turns
from truc_game.ports import Entry

__all__ = ["decode", "missed_of", "tail"]

_ZERO = ord("0")


def tail(request: str, state: bytes, events: bytes) -> bytes:
    """The part of a publication the committing replica builds."""
    key = request.encode()
    return b"%d\n%s%d\n%s%s" % (len(key), key, len(state), state, events)


def missed_of(field: bytes) -> tuple[int, ...]:
    """The missed turns of each seat, as the commit script writes them."""
    return missed_turns(count - _ZERO for count in field) if field else ()


def decode(data: bytes) -> Entry:
    """The entry a publication carries. Raises ValueError on anything else."""
    try:
        version, deadline, missed, rest = data.split(b"\n", 3)
        size, rest = rest.split(b"\n", 1)
        key_end = int(size)
        request, rest = rest[:key_end], rest[key_end:]
        size, rest = rest.split(b"\n", 1)
        state_end = int(size)
        if key_end < 0 or state_end < 0 or len(rest) < state_end:
            raise ValueError("publication truncated")
        return Entry(
            int(version),
            rest[:state_end],
            rest[state_end:],
            int(deadline) if deadline else None,
            request.decode(),
            missed_of(missed),
        )
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"not a version publication: {exc}") from None
