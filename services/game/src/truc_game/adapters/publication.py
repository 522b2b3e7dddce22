"""What a commit publishes on the game's channel: the version itself.

Every replica's feed (:mod:`.redis_feed`) hands a published version to its
watchers and sessions without reading it back from Redis. The commit script
(:mod:`.redis_store`) publishes, in the same atomic step that writes the
version::

    <version> LF <deadline ms or empty> LF <len(request)> LF <request>
    <len(state)> LF <state> <events>

The script writes the first two fields (it resolves a kept deadline); the rest,
the :func:`tail`, is built here from what the committing replica already has.
``request`` is the request key of the action (player NUL request id, or empty).
"""

from __future__ import annotations

from truc_game.ports import Entry

__all__ = ["decode", "tail"]


def tail(request: str, state: bytes, events: bytes) -> bytes:
    """The part of a publication the committing replica builds."""
    key = request.encode()
    return b"%d\n%s%d\n%s%s" % (len(key), key, len(state), state, events)


def decode(data: bytes) -> Entry:
    """The entry a publication carries. Raises ValueError on anything else."""
    try:
        version, deadline, rest = data.split(b"\n", 2)
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
        )
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"not a version publication: {exc}") from None
