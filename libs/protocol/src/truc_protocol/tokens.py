"""The bearer tokens of the protocol: HS256 JWTs naming the player.

The game service checks ``sub`` (the player), ``role`` (``player``, ``lobby``,
``spectator``), ``scope`` (absent, or ``stream``: a short-lived stream token,
:data:`STREAM_SCOPE`), ``name`` (optional: the display name), ``game``
(optional, spectators only: the one game a spectator grant opens), ``iss``
``truc-lobby``, ``aud`` ``truc-game``, ``iat`` and ``exp`` (verification:
:class:`truc_service.tokens.TokenVerifier`).
:func:`issue_token` signs one with the standard library, for whoever holds the
key: the tests, the benchmarks, and the ``truc`` command's own games (``truc
scenario --via`` creates its game and acts for every seat, as the lobby
would). :data:`DEV_SECRET` is the one definition of the public development key.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Final

__all__ = ["DEV_SECRET", "STREAM_SCOPE", "issue_token"]

DEV_SECRET: Final = "truc-development-secret-do-not-use-in-production"
"""The public development key: what a service in dev mode (``TRUC_DEV_MODE=1``)
verifies tokens with when no ``TRUC_JWT_SECRET`` is set; being public, a
service never accepts it outside dev mode."""
STREAM_SCOPE: Final = "stream"
"""The ``scope`` claim of a stream token: short-lived, for a stream's URL (an SSE
``access_token``), accepted only where a service says so."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _segment(value: dict[str, object]) -> str:
    return _b64(json.dumps(value, separators=(",", ":")).encode("utf-8"))


_HEADER: Final = _segment({"alg": "HS256", "typ": "JWT"})


def issue_token(
    secret: str,
    player: str,
    *,
    role: str = "player",
    ttl_seconds: float = 3600.0,
    issuer: str = "truc-lobby",
    audience: str | list[str] = "truc-game",
    now: float | None = None,
    scope: str | None = None,
    name: str | None = None,
    game: str | None = None,
) -> str:
    """A signed HS256 token for ``player`` with ``role`` (``player``, ``lobby``,
    ``spectator``) and, if given, ``scope`` (:data:`STREAM_SCOPE` for a stream
    token), ``name`` (the player's display name,
    :mod:`truc_protocol.display_names`) and ``game`` (a spectator grant's one
    game, ``"games/{game}"``)."""
    issued = time.time() if now is None else now
    claims: dict[str, object] = {
        "sub": player,
        "role": role,
        "iss": issuer,
        "aud": audience,
        "iat": int(issued),
        "exp": int(issued + ttl_seconds),
    }
    if scope is not None:
        claims["scope"] = scope
    if name is not None:
        claims["name"] = name
    if game is not None:
        claims["game"] = game
    signing_input = f"{_HEADER}.{_segment(claims)}"
    signature = hmac.new(secret.encode("utf-8"), signing_input.encode("ascii"), hashlib.sha256)
    return f"{signing_input}.{_b64(signature.digest())}"
