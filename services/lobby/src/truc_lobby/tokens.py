"""The lobby is the issuer of bearer tokens (HS256, ``iss`` = ``truc-lobby``).

* Player tokens (SignInGuest, and the ``game_token`` of a matched ticket) name
  the player in ``sub`` and are valid for the lobby and the game service
  (``aud`` = ``["truc-lobby", "truc-game"]``).
* The lobby's own token (``role`` = ``lobby``, ``aud`` = ``truc-game``) lets it
  create games.
* Player tokens carry the player's display name in the claim ``name`` when
  they have one (:mod:`truc_protocol.display_names`: a guest's from SignInGuest).
* Spectator grants (CreateSpectatorGrant: :meth:`TokenIssuer.spectator_grant`):
  ``role`` = ``spectator``, ``sub`` the asking player, ``name`` their display
  name, ``game`` the one game it opens (``"games/{game}"``), for the game
  service only (``aud`` = ``truc-game``), valid ``TRUC_SPECTATOR_GRANT_SECONDS``.
* Stream tokens (CreateStreamToken: :meth:`TokenIssuer.stream_token`) are a
  player's, short-lived (``TRUC_STREAM_TOKEN_SECONDS``), with the claim
  ``scope`` = ``stream``, for both audiences: for a stream's URL, accepted only
  by the watch streams (WatchTicket here, WatchGame at the game service).
* Production hook: tokens of an external identity provider are accepted too
  when ``TRUC_EXTERNAL_JWT_KEY`` is set (verified with that key, algorithm,
  issuer and audience); their ``sub`` becomes the player id, and they are
  always a player's: a ``role`` claim in them is ignored (the provider's roles
  are not this service's, so it can grant no ``lobby`` or ``spectator``), and
  so is a ``scope``; their ``name`` claim is the display name if it is a valid
  one (normalized first), else ignored (no name); an ``exp`` further ahead
  than ``TRUC_MAX_TOKEN_SECONDS`` is refused, as for the lobby's own tokens.

Only players act at the lobby (:meth:`TokenIssuer.player`): a token of role
``lobby`` (the lobby's own, for CreateGame) or ``spectator`` is refused
PERMISSION_DENIED ``PLAYERS_ONLY`` by every player RPC, and a stream token
PERMISSION_DENIED ``STREAM_TOKEN_WATCH_ONLY`` by every RPC but WatchTicket
(CreateStreamToken too: a stream token does not renew itself). Every ``sub`` is a
player id of the safe alphabet (:func:`truc_protocol.identifiers.valid_player_id`),
or the token is ``TOKEN_INVALID``.

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

from truc_protocol.display_names import display_name_problem, normalized_display_name
from truc_protocol.errors import PermissionDenied, Unauthenticated
from truc_service.tokens import (
    ALGORITHM,
    MAX_LIFETIME,
    STREAM_SCOPE,
    STREAM_TOKEN_WATCH_ONLY,
    Identity,
    TokenVerifier,
    bearer_token,
    checked_expiry,
    checked_player,
    full_token,
    issue_token,
)

__all__ = ["ISSUER", "LOBBY_AUDIENCE", "PLAYERS_ONLY", "STREAM_TOKEN_WATCH_ONLY", "TokenIssuer"]

ISSUER: Final = "truc-lobby"
LOBBY_AUDIENCE: Final = "truc-lobby"
GAME_AUDIENCE: Final = "truc-game"
PLAYERS_ONLY: Final = "PLAYERS_ONLY"
"""PERMISSION_DENIED: a token of another role than a player's at the lobby."""


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
        stream_ttl_seconds: int = 60,
        external: ExternalIdentityProvider | None = None,
        max_lifetime: float = MAX_LIFETIME,
    ) -> None:
        self._secret = secret
        self._ttl = ttl_seconds
        self._stream_ttl = stream_ttl_seconds
        self._external = external
        self._max_lifetime = max_lifetime
        self._own = TokenVerifier(
            secret, issuer=ISSUER, audience=LOBBY_AUDIENCE, max_lifetime=max_lifetime
        )

    def player_token(
        self, player: str, *, name: str = "", now: float | None = None
    ) -> tuple[str, int]:
        """A token for the lobby and the game service, and when it expires
        (seconds); ``name``: the player's display name (claim ``name``; none if
        empty)."""
        issued = int(time.time() if now is None else now)
        expires = issued + self._ttl
        claims: dict[str, object] = {
            "sub": player,
            "role": "player",
            "iss": ISSUER,
            "aud": [LOBBY_AUDIENCE, GAME_AUDIENCE],
            "iat": issued,
            "exp": expires,
        }
        if name:
            claims["name"] = name
        return jwt.encode(claims, self._secret, algorithm=ALGORITHM), expires

    def spectator_grant(
        self, player: str, game: str, *, name: str = "", ttl_seconds: int, now: float | None = None
    ) -> tuple[str, int]:
        """A spectator grant of ``player`` (display name ``name``, none if
        empty) for the one game ``game`` (``"games/{game}"``): role
        ``spectator``, for the game service only; and when it expires (seconds)."""
        issued = int(time.time() if now is None else now)
        token = issue_token(
            self._secret,
            player,
            role="spectator",
            ttl_seconds=ttl_seconds,
            issuer=ISSUER,
            audience=GAME_AUDIENCE,
            now=issued,
            name=name or None,
            game=game,
        )
        return token, issued + ttl_seconds

    def stream_token(self, player: str, *, now: float | None = None) -> tuple[str, int]:
        """A stream token for ``player`` (the watch streams of the lobby and the
        game service only), and when it expires (seconds)."""
        issued = int(time.time() if now is None else now)
        token = issue_token(
            self._secret,
            player,
            ttl_seconds=self._stream_ttl,
            issuer=ISSUER,
            audience=[LOBBY_AUDIENCE, GAME_AUDIENCE],
            now=issued,
            scope=STREAM_SCOPE,
        )
        return token, issued + self._stream_ttl

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

    def verify(self, header: str | None) -> Identity:
        """Who ``authorization: Bearer <token>`` names (an external provider's
        token: always a player)."""
        try:
            identity = self._own.verify(header)
        except Unauthenticated as own_error:
            if self._external is None or own_error.reason != "TOKEN_INVALID":
                raise
            identity = self._verify_external(bearer_token(header))
        return identity

    def player(self, header: str | None, *, watching: bool = False) -> str:
        """The player ``authorization: Bearer <token>`` names (see :meth:`identity`)."""
        return self.identity(header, watching=watching).player

    def identity(self, header: str | None, *, watching: bool = False) -> Identity:
        """The player ``authorization: Bearer <token>`` names, with their
        display name; PERMISSION_DENIED ``PLAYERS_ONLY`` for a token of another
        role (the lobby's, a spectator's), and ``STREAM_TOKEN_WATCH_ONLY`` for a
        stream token unless ``watching`` (a watch stream is the call)."""
        identity = self.verify(header)
        if identity.role != "player":
            raise PermissionDenied(
                PLAYERS_ONLY,
                f"a {identity.role} token cannot act at the lobby: sign in as a player",
            )
        if not watching:
            full_token(identity, "watch streams (WatchTicket, WatchGame)")
        return identity

    def _verify_external(self, token: str) -> Identity:
        """The player an external provider's token names (its role claim ignored)."""
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
        player = checked_player(claims.get("sub"))
        expires = checked_expiry(claims.get("exp"), time.time(), self._max_lifetime)
        return Identity(player, "player", expires, display_name=_external_name(claims.get("name")))


def _external_name(claim: object) -> str:
    """An identity provider's ``name`` claim as a display name (normalized), or
    "" when it has none or not a valid one (the provider's rules are not ours:
    the player is still signed in, without a name)."""
    if not isinstance(claim, str):
        return ""
    name = normalized_display_name(claim)
    return "" if display_name_problem(name) is not None else name
