"""A token in the URL must be a stream token (or a spectator grant for the game
the URL watches).

``EventSource`` cannot set headers, so the streaming (``:watch``) routes take
``?access_token=<JWT>``; but URLs end up in proxies' access logs, browser
history and ``Referer`` headers, so the token there may only be a *stream
token*: a JWT whose claims hold ``"scope": "stream"``
(:data:`truc_protocol.tokens.STREAM_SCOPE`) and whose lifetime is at
most :data:`MAX_URL_TOKEN_SECONDS` (``exp - iat``, counted from now instead when
``iat`` is absent or in the future). The lobby issues one, for 60 s, to the
holder of a player token: ``POST /v1/streamTokens`` (``CreateStreamToken``)
with the ``Authorization`` header. The services accept stream tokens for the
watch streams only.

A **spectator grant** (the lobby's ``CreateSpectatorGrant``, ``POST
/v1/games/{game}:spectate``: claims ``role`` ``"spectator"`` and ``game``
``"games/{game}"``) is read-only and for one public game, so it may stand in
the URL of that game's watch stream (``GET /v1/games/{game}:watch``,
:data:`GRANT_ROUTES`) whatever its lifetime (4 hours by default): the claim
``game`` must be the game the path names. A grant for another game, a
spectator token without ``game``, or a grant on any other route is still
TOKEN_IN_URL.

The gateway holds no key, so it cannot verify the signature (the services do,
and the expiry); it reads the claims unverified, only to refuse, before any
call, a URL token that is not even claiming to be a stream token (or the
watched game's grant): 401 UNAUTHENTICATED, reason ``TOKEN_IN_URL``. A forged
"stream token" gains nothing: the service refuses its signature. The
``Authorization`` header, on every route, is unchanged (``fetch``-based SSE
readers send it).
"""

from __future__ import annotations

import time
from typing import Any, Final

import grpc
import jwt

from truc_protocol.tokens import STREAM_SCOPE

from .errors import GatewayError

__all__ = ["GRANT_ROUTES", "MAX_URL_TOKEN_SECONDS", "TOKEN_IN_URL", "check_url_token"]

MAX_URL_TOKEN_SECONDS: Final = 300
"""The longest lifetime of a token the gateway takes in a URL."""
TOKEN_IN_URL: Final = "TOKEN_IN_URL"
GRANT_ROUTES: Final = frozenset({"truc.v1.GameService.WatchGame"})
"""The streaming RPCs whose URL may carry a spectator grant for the game it names."""
SPECTATOR_ROLE: Final = "spectator"

_ADVICE: Final = (
    "get a stream token (POST /v1/streamTokens with the Authorization header; "
    "valid 60 s) for ?access_token=, or send the Authorization header "
    "(fetch-based readers) instead"
)
_GRANT_ADVICE: Final = (
    "; a spectator watches with the game's grant (POST /v1/games/{game}:spectate) in ?access_token="
)


def check_url_token(token: str, *, game: str | None = None, now: float | None = None) -> None:
    """Refuse (GatewayError 401 TOKEN_IN_URL) a URL token that is not a stream
    token, nor, when ``game`` is given (the ``"games/{game}"`` a route of
    :data:`GRANT_ROUTES` names), a spectator grant for that game."""
    claims = _claims(token)
    if claims is None:
        raise _in_url("the access_token in the URL is not a JWT", grants=game is not None)
    if game is not None and claims.get("role") == SPECTATOR_ROLE and "game" in claims:
        if claims["game"] != game:
            raise _in_url(
                f"the spectator grant in the URL is for another game, not {game}", grants=True
            )
        if _number(claims.get("exp")) is None:
            raise _in_url("the token in the URL has no expiry", grants=True)
        return
    if claims.get("scope") != STREAM_SCOPE:
        raise _in_url(
            "the URL may carry a stream token only, not a long-lived token"
            + (" (or this game's spectator grant)" if game is not None else ""),
            grants=game is not None,
        )
    expires = _number(claims.get("exp"))
    if expires is None:
        raise _in_url("the token in the URL has no expiry")
    current = time.time() if now is None else now
    issued = _number(claims.get("iat"))
    start = current if issued is None else min(issued, current)
    if expires - start > MAX_URL_TOKEN_SECONDS:
        raise _in_url(
            f"the token in the URL lives longer than a stream token ({MAX_URL_TOKEN_SECONDS} s)"
        )


def _claims(token: str) -> dict[str, Any] | None:
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        return None
    return claims if isinstance(claims, dict) else None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _in_url(why: str, *, grants: bool = False) -> GatewayError:
    advice = _ADVICE + (_GRANT_ADVICE if grants else "")
    return GatewayError(401, grpc.StatusCode.UNAUTHENTICATED, TOKEN_IN_URL, f"{why}: {advice}")
