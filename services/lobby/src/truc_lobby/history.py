"""Each player's finished games, for ``ListGames``.

When a game the lobby seated ends, :mod:`truc_lobby.results` records it in the
same atomic script that rates it and frees its players:

* ``{P}:summary:{game}``: the game's record (its rule set and table size, its
  seats, the winning team, when it ended, the rating changes in that rule
  set), JSON; records written before the rule sets existed have no rule set
  and are Truc y Flou's, at six seats;
* ``{P}:history:{player}``: a sorted set per human player, game id -> the end
  time in ms, trimmed to the :data:`HISTORY_LIMIT` most recent: one history of
  every rule set (each record says its own).

Both expire after the history retention (``TRUC_HISTORY_SECONDS``). Pages run
from the most recent game down; a page token is the (end time, game id) of the
last game of the previous page, so games that end meanwhile never shift a page.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Final

from truc_redis.connection import RedisClient
from truc_rules.rule_set import RuleSet

from .store import P, store_call

__all__ = [
    "HISTORY_LIMIT",
    "GameHistory",
    "GameRecord",
    "PageTokenError",
    "history_key",
    "page_token",
    "parse_page_token",
    "summary_key",
]

HISTORY_LIMIT: Final = 1000
"""The most recent games kept per player."""


def history_key(player: str) -> str:
    return f"{P}:history:{player}"


def summary_key(game: str) -> str:
    return f"{P}:summary:{game}"


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A finished game as the lobby recorded it."""

    game: str
    seats: tuple[tuple[int, str, bool], ...]
    """(seat, player, bot), by seat."""
    winner: int | None
    """0 for team A, 1 for team B, None when the game ended without a winner."""
    end_ms: int
    changes: dict[str, float]
    """Rating change of each rated player (in the game's rule set)."""
    rule_set: RuleSet = RuleSet.TRUC_Y_FLOU
    names: tuple[str, ...] = ()
    """Each seat's display name, as ``seats`` (none: a record written before
    display names, or a game seated before them)."""
    private: bool = False
    """The table was private."""

    def name_of(self, index: int) -> str:
        """The display name of ``seats[index]`` ("" if unknown)."""
        return self.names[index] if index < len(self.names) else ""

    @property
    def seat_count(self) -> int:
        """Seats at the table: 6, 4 or 2."""
        return len(self.seats)

    def encode(self) -> str:
        return json.dumps(
            {
                "g": self.game,
                "r": str(self.rule_set),
                "s": [list(seat) for seat in self.seats],
                "w": self.winner,
                "e": self.end_ms,
                "c": self.changes,
                "n": list(self.names),
                "p": int(self.private),
            },
            separators=(",", ":"),
        )

    @staticmethod
    def decode(data: bytes | str) -> GameRecord:
        raw = json.loads(data)
        return GameRecord(
            game=str(raw["g"]),
            seats=tuple((int(s), str(p), bool(b)) for s, p, b in raw["s"]),
            winner=None if raw["w"] is None else int(raw["w"]),
            end_ms=int(raw["e"]),
            changes={str(k): float(v) for k, v in raw["c"].items()},
            rule_set=RuleSet(raw.get("r", RuleSet.TRUC_Y_FLOU)),
            names=tuple(str(n) for n in raw.get("n", ())),
            private=bool(raw.get("p", 0)),
        )


SCAN_BATCH: Final = 100
"""Games read at a time when ListGames filters by rule set."""
SCAN_LIMIT: Final = 1000
"""Games read at most by one filtered ListGames call (a bounded cost per call)."""


class PageTokenError(ValueError):
    """A page token this lobby did not issue."""


def page_token(ms: int, game: str) -> str:
    """The opaque token of a page that goes on after the game ``game`` at time
    ``ms`` (a sorted set of games scored by time, read most recent first: the
    histories here, the live games in :mod:`truc_lobby.live`)."""
    raw = f"{ms}:{game}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _page_token(record: GameRecord) -> str:
    return page_token(record.end_ms, record.game)


def parse_page_token(token: str) -> tuple[int, str]:
    """The (time, game) of a :func:`page_token`; :class:`PageTokenError` if it
    is not one."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        end, game = raw.split(":", 1)
        end_ms = int(end)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise PageTokenError(token) from None
    if end_ms < 0 or not game:
        raise PageTokenError(token)
    return end_ms, game


class GameHistory:
    """Reads the players' histories (``results`` writes them)."""

    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis

    @store_call
    async def page(
        self, player: str, size: int, token: str, rule_set: RuleSet | None = None
    ) -> tuple[list[GameRecord], str]:
        """Up to ``size`` of the player's games after ``token`` (most recent first),
        only those of ``rule_set`` if given, and the token of the next page (""
        if there is none).

        With a rule set, at most :data:`SCAN_LIMIT` games are read per call: a
        page may then be short and still have a next token (the last game read).
        Raises :class:`PageTokenError` for a token this lobby did not issue, and
        ``Unavailable`` (``STORE_UNAVAILABLE``) when Redis fails.
        """
        if rule_set is None:
            records, more = await self._read(player, size, token)
            return records, _page_token(records[-1]) if more and records else ""
        found: list[GameRecord] = []
        read = 0
        while True:
            batch = min(SCAN_BATCH, SCAN_LIMIT - read)
            records, more = await self._read(player, batch, token)
            read += len(records)
            for i, record in enumerate(records):
                if record.rule_set == rule_set:
                    found.append(record)
                    if len(found) == size:
                        rest = more or i < len(records) - 1
                        return found, _page_token(record) if rest else ""
            if not more or not records:
                return found, ""
            token = _page_token(records[-1])
            if read >= SCAN_LIMIT:
                return found, token

    async def _read(self, player: str, size: int, token: str) -> tuple[list[GameRecord], bool]:
        """Up to ``size`` games after ``token``, and whether more follow."""
        key = history_key(player)
        pipe = self._redis.pipeline(transaction=False)
        if token:
            end_ms, last = parse_page_token(token)
            pipe.zrevrangebyscore(key, end_ms, end_ms)  # games that ended the same ms
            pipe.zrevrangebyscore(key, f"({end_ms}", "-inf", start=0, num=size + 1)
            ties, older = await pipe.execute()
            # Ties come in descending id order: those after the last one sent.
            games = [g for g in ties if g.decode() < last] + list(older)
        else:
            games = await self._redis.zrevrangebyscore(key, "+inf", "-inf", start=0, num=size + 1)
        more = len(games) > size
        games = games[:size]
        raw = await self._redis.mget([summary_key(g.decode()) for g in games]) if games else []
        return [GameRecord.decode(r) for r in raw if r is not None], more
