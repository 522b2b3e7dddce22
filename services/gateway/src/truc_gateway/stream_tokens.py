"""A token in the URL must be a stream token.

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

The gateway holds no key, so it cannot verify the signature (the services do,
and the expiry); it reads the claims unverified, only to refuse, before any
call, a URL token that is not even claiming to be a stream token: 401
UNAUTHENTICATED, reason ``TOKEN_IN_URL``. A forged "stream token" gains
nothing: the service refuses its signature. The ``Authorization`` header, on
every route, is unchanged (``fetch``-based SSE readers send it).
"""

from __future__ import annotations

import time
from typing import Any, Final

import grpc
import jwt

from truc_protocol.tokens import STREAM_SCOPE

from .errors import GatewayError

__all__ = ["MAX_URL_TOKEN_SECONDS", "TOKEN_IN_URL", "check_url_token"]

MAX_URL_TOKEN_SECONDS: Final = 300
"""The longest lifetime of a token the gateway takes in a URL."""
TOKEN_IN_URL: Final = "TOKEN_IN_URL"

_ADVICE: Final = (
    "get a stream token (POST /v1/streamTokens with the Authorization header; "
    "valid 60 s) for ?access_token=, or send the Authorization header "
    "(fetch-based readers) instead"
)


def check_url_token(token: str, *, now: float | None = None) -> None:
    """Refuse (GatewayError 401 TOKEN_IN_URL) a URL token that is not a stream token."""
    claims = _claims(token)
    if claims is None:
        raise _in_url("the access_token in the URL is not a JWT")
    if claims.get("scope") != STREAM_SCOPE:
        raise _in_url("the URL may carry a stream token only, not a long-lived token")
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


def _in_url(why: str) -> GatewayError:
    return GatewayError(401, grpc.StatusCode.UNAUTHENTICATED, TOKEN_IN_URL, f"{why}: {_ADVICE}")
