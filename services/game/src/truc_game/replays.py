"""GetReplay's pages: how many steps a call may ask for, and its page tokens.

A replay is the game's every version from 1, in order, each as the viewer saw
it (:meth:`truc_game.service.GameService.get_replay`). A page holds at most
:data:`MAX_PAGE_SIZE` steps, so one call builds at most that many views, and
replays the game's log once, from version 1 to the page's last version.

A page token is opaque to clients: the game and the version the next page
starts after, URL-safe base64. A token that is not one of this game's, or that
points past the game's latest version, is ``INVALID_ARGUMENT BAD_REQUEST``.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from truc_protocol.errors import InvalidArgument

if TYPE_CHECKING:
    from .service import SeatView

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "MAX_PAGE_SIZE",
    "ReplayPage",
    "page_size_of",
    "page_token",
    "version_after",
]

DEFAULT_PAGE_SIZE: Final = 50
"""Steps in a page when the request says 0."""
MAX_PAGE_SIZE: Final = 200
"""The most steps one call builds."""
_MAX_TOKEN: Final = 120
_TOKEN: Final = re.compile(r"r1:([A-Za-z0-9_-]{1,64}):([1-9][0-9]{0,11})")


@dataclass(frozen=True, slots=True)
class ReplayPage:
    """One page of a replay."""

    steps: Sequence[SeatView]
    """The viewer's view of each version of the page, oldest first (each with
    that version's events the viewer may see)."""
    latest_version: int
    finished: bool
    next_page_token: str
    """Empty after the last version so far."""


def page_size_of(page_size: int) -> int:
    """The steps a page holds: 1-:data:`MAX_PAGE_SIZE`, 0 for
    :data:`DEFAULT_PAGE_SIZE`; anything else BAD_REQUEST."""
    if page_size == 0:
        return DEFAULT_PAGE_SIZE
    if not 1 <= page_size <= MAX_PAGE_SIZE:
        raise InvalidArgument(
            "BAD_REQUEST", f"page_size: 1-{MAX_PAGE_SIZE}, or 0 for {DEFAULT_PAGE_SIZE}"
        )
    return page_size


def page_token(game_id: str, after_version: int) -> str:
    """The token of the page of ``game_id``'s replay after ``after_version``."""
    raw = f"r1:{game_id}:{after_version}".encode("ascii")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def version_after(game_id: str, token: str) -> int:
    """The version a page starts after: 0 for no token, else the one ``token``
    (:func:`page_token` of ``game_id``) names; BAD_REQUEST if it is not one."""
    if not token:
        return 0
    found = None
    if len(token) <= _MAX_TOKEN:
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            found = _TOKEN.fullmatch(raw.decode("ascii"))
        except (binascii.Error, UnicodeDecodeError, ValueError):
            found = None
    if (
        found is None
        or found.group(1) != game_id
        or page_token(game_id, int(found.group(2))) != token  # one spelling only
    ):
        raise InvalidArgument(
            "BAD_REQUEST",
            "page_token: not a page token of this game's replay (pass a next_page_token as given)",
        )
    return int(found.group(2))
