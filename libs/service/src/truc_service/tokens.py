"""Bearer tokens: HS256 JWTs issued by the lobby, naming the player.

Claims: ``sub`` (the player id), ``exp`` (required), ``iss`` and ``aud``
(checked against the settings), and an optional ``role``: ``"lobby"`` may
create games, ``"spectator"`` may watch any game's public view. A verified
token is remembered until it expires, so a busy player's token is checked
once, not on every call. Signing is the protocol's
(:func:`truc_protocol.tokens.issue_token`, re-exported here).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Final

import jwt

from truc_protocol.errors import Unauthenticated
from truc_protocol.tokens import issue_token

__all__ = ["ALGORITHM", "CACHE_LIMIT", "Identity", "TokenVerifier", "bearer_token", "issue_token"]

ALGORITHM: Final = "HS256"
CACHE_LIMIT: Final = 20_000
"""Verified tokens remembered (then forgotten all at once): about 0.5 KB each, so
some 10 MB at most; a token seen again costs a dictionary lookup instead of an
HMAC check. (It was 100,000, some 50 MB: the soak saw the game service's memory
climb towards it.)"""


@dataclass(frozen=True, slots=True)
class Identity:
    player: str
    role: str
    """``"player"`` (the default), ``"lobby"`` or ``"spectator"``."""
    expires: float


def bearer_token(header: str | None) -> str:
    """The token of an ``authorization: Bearer <token>`` value; TOKEN_MISSING or
    TOKEN_INVALID (Unauthenticated) if there is none or it is not that shape."""
    if not header:
        raise Unauthenticated("TOKEN_MISSING", "send metadata 'authorization: Bearer <token>'")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise Unauthenticated(
            "TOKEN_INVALID", "the authorization metadata must be 'Bearer <token>'"
        )
    return token


class TokenVerifier:
    """Checks ``authorization: Bearer <jwt>`` metadata values."""

    def __init__(
        self, secret: str, *, issuer: str, audience: str, cache_limit: int = CACHE_LIMIT
    ) -> None:
        self._secret = secret
        self._issuer = issuer
        self._audience = audience
        self._cache_limit = cache_limit
        self._verified: dict[str, Identity] = {}

    @property
    def cached(self) -> int:
        """How many verified tokens are remembered now."""
        return len(self._verified)

    def verify(self, header: str | None, *, now: float | None = None) -> Identity:
        token = bearer_token(header)
        now = time.time() if now is None else now
        known = self._verified.get(token)
        if known is not None:
            if known.expires > now:
                return known
            del self._verified[token]
            raise Unauthenticated("TOKEN_EXPIRED", "the token has expired; sign in again")
        try:
            claims = jwt.decode(
                token,
                self._secret,
                algorithms=[ALGORITHM],
                issuer=self._issuer,
                audience=self._audience,
                options={"require": ["exp", "sub", "iss", "aud"]},
            )
        except jwt.ExpiredSignatureError:
            raise Unauthenticated("TOKEN_EXPIRED", "the token has expired; sign in again") from None
        except jwt.PyJWTError as exc:
            raise Unauthenticated("TOKEN_INVALID", f"the token is not valid: {exc}") from None
        player = claims["sub"]
        role = claims.get("role", "player")
        if not isinstance(player, str) or not player or len(player) > 128:
            raise Unauthenticated("TOKEN_INVALID", "the token's sub must name a player")
        if role not in ("player", "lobby", "spectator"):
            raise Unauthenticated("TOKEN_INVALID", f"unknown role {role!r}")
        identity = Identity(player, role, float(claims["exp"]))
        if len(self._verified) >= self._cache_limit:
            self._verified.clear()
        self._verified[token] = identity
        return identity
