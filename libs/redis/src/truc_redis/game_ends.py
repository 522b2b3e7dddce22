"""The stream of ended games: how the lobby learns that a match is over.

The game service's commit script appends one entry to its shard's stream in
the same atomic step that writes the version finishing a game (so no ended
game goes unannounced, and no move costs the lobby a message). The lobby reads
every shard's stream with one consumer group (:data:`GROUP`): each ended game
is handled by one lobby replica, acknowledged once recorded, and claimed by
another replica if the first one dies before acknowledging.

Defined here, once, for both sides: the shard of a game (the hash tag all of
its keys share, so the stream lives in the same Redis Cluster slot as the
game and the script may write it), the stream's key per shard, and the
entry's fields.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Final

__all__ = [
    "ENDED_MAXLEN",
    "GROUP",
    "SHARDS",
    "GameEnd",
    "ended_stream",
    "shard_of",
]

SHARDS: Final = 64
"""Games are spread over 64 hash tags (``{g0}`` .. ``{g63}``)."""

GROUP: Final = "lobby"
"""The lobby's consumer group on every shard's stream."""

ENDED_MAXLEN: Final = 10_000
"""Each shard's stream is trimmed (approximately) to this many entries: far more
than the lobby ever leaves unread."""


def shard_of(game_id: str) -> int:
    """The shard (hash tag) of a game's keys."""
    return zlib.crc32(game_id.encode()) % SHARDS


def ended_stream(shard: int) -> str:
    """Stream of one shard's ended games: entries ``g`` (the game id) and ``w``
    (the winning team, ``A`` or ``B``; empty when the game ended without a
    winner: its fixed deals ran out)."""
    return f"truc:{{g{shard}}}:ended"


@dataclass(frozen=True, slots=True)
class GameEnd:
    """One entry of an ended-games stream."""

    game_id: str
    winner: int | None
    """0 for team A, 1 for team B, None for no winner."""

    def fields(self) -> dict[str, str]:
        return {"g": self.game_id, "w": "" if self.winner is None else "AB"[self.winner]}

    @staticmethod
    def from_fields(fields: dict[bytes, bytes]) -> GameEnd:
        """Raises ValueError on an entry that is not one of ours."""
        try:
            game = fields[b"g"].decode()
            winner = fields.get(b"w", b"").decode()
        except (KeyError, UnicodeDecodeError) as exc:
            raise ValueError(f"not an ended-game entry: {fields!r}") from exc
        if winner not in ("", "A", "B"):
            raise ValueError(f"bad winner in ended-game entry: {winner!r}")
        return GameEnd(game, None if not winner else "AB".index(winner))
