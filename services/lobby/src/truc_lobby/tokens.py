"""The lobby is the issuer of bearer tokens (HS256, ``iss`` = ``truc-lobby``).

* Player tokens (SignInGuest, and the ``game_token`` of a matched ticket) name
  the player in ``sub`` and are valid for the lobby and the game service
  (``aud`` = ``["truc-lobby", "truc-game"]``).
* The lobby's own token (``role`` = ``lobby``, ``aud`` = ``truc-game``) lets it
  create games.
* Production hook: tokens of an external identity provider are accepted too
  when ``TRUC_EXTERNAL_JWT_KEY`` is set (verified with that key, algorithm,
  issuer and audience); their ``sub`` becomes the player id.

The lobby's own tokens are verified by the kit's
:class:`truc_service.tokens.TokenVerifier` (``iss`` = ``truc-lobby``, ``aud``
= ``truc-lobby``), the one JWT check of every truc service; a token it finds
invalid is tried against the external provider, if there is one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Final

import jwt

from truc_protocol.errors import Unauthenticated
from truc_service.tokens import ALGORITHM, TokenVerifier, bearer_token

__all__ = ["ISSUER", "LOBBY_AUDIENCE", "TokenIssuer"]

ISSUER: Final = "truc-lobby"
LOBBY_AUDIENCE: Final = "truc-lobby"
GAME_AUDIENCE: Final = "truc-game"


@dataclass(frozen=True, slots=True)
class ExternalIdentityProvider:
    key: str
    algorithm: str
    issuer: str | None
    audience: str | None


class TokenIssuer:
    def __init__(
        self,
        secret: str,
        *,
        ttl_seconds: int,
        external: ExternalIdentityProvider | None = None,
    ) -> None:
        self._secret = secret
        self._ttl = ttl_seconds
        self._external = external
        self._own = TokenVerifier(secret, issuer=ISSUER, audience=LOBBY_AUDIENCE)

    def player_token(self, player: str, *, now: float | None = None) -> tuple[str, int]:
        """A token for the lobby and the game service, and when it expires (seconds)."""
        issued = int(time.time() if now is None else now)
        expires = issued + self._ttl
        claims = {
            "sub": player,
            "role": "player",
            "iss": ISSUER,
            "aud": [LOBBY_AUDIENCE, GAME_AUDIENCE],
            "iat": issued,
            "exp": expires,
        }
        return jwt.encode(claims, self._secret, algorithm=ALGORITHM), expires

    def lobby_token(self, *, now: float | None = None) -> str:
        """The lobby's own token for GameService.CreateGame."""
        issued = int(time.time() if now is None else now)
        claims = {
            "sub": "truc-lobby",
            "role": "lobby",
            "iss": ISSUER,
            "aud": GAME_AUDIENCE,
            "iat": issued,
            "exp": issued + 3600,
        }
        return jwt.encode(claims, self._secret, algorithm=ALGORITHM)

    def verify(self, header: str | None) -> str:
        """The player id named by ``authorization: Bearer <token>``."""
        try:
            return self._own.verify(header).player
        except Unauthenticated as own_error:
            if self._external is None or own_error.reason != "TOKEN_INVALID":
                raise
            claims = self._verify_external(bearer_token(header))
        player = claims.get("sub")
        if not isinstance(player, str) or not 1 <= len(player) <= 128:
            raise Unauthenticated("TOKEN_INVALID", "the token's sub must name a player")
        return player

    def _verify_external(self, token: str) -> dict[str, object]:
        external = self._external
        assert external is not None
        try:
            claims: dict[str, object] = jwt.decode(
                token,
                external.key,
                algorithms=[external.algorithm],
                issuer=external.issuer,
                audience=external.audience,
                options={
                    "require": ["exp", "sub"],
                    "verify_aud": external.audience is not None,
                    "verify_iss": external.issuer is not None,
                },
            )
        except jwt.ExpiredSignatureError:
            raise Unauthenticated("TOKEN_EXPIRED", "the token has expired; sign in again") from None
        except jwt.PyJWTError as exc:
            raise Unauthenticated("TOKEN_INVALID", f"the token is not valid: {exc}") from None
        return claims
