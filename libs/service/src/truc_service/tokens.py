"""Bearer tokens: HS256 JWTs issued by the lobby, naming the player.

Claims: ``sub`` (the player id, of the safe alphabet:
:func:`truc_protocol.identifiers.valid_player_id`), ``exp`` (required), ``iss``
and ``aud`` (checked against the settings), an optional ``role``: ``"lobby"``
may create games, ``"spectator"`` may watch a game's public view (the one
game its ``game`` claim names, for a grant from the lobby's
CreateSpectatorGrant; any game without one); an optional ``name`` (the
player's display name); and an optional ``scope``: ``"stream"`` marks a
short-lived stream token (for a URL, such as an SSE stream's, where proxies
log it): :attr:`Identity.stream_only`, and each service decides where such a
token is enough. Every refusal is UNAUTHENTICATED ``TOKEN_INVALID``
(``TOKEN_EXPIRED`` once ``exp`` has passed):

* a ``sub`` that is not a player id, an unknown ``role`` or ``scope``;
* an ``exp`` more than ``max_lifetime`` seconds ahead (default
  :data:`MAX_LIFETIME`, 30 days; the services' ``TRUC_MAX_TOKEN_SECONDS``): a
  stolen token must not work for years;
* an ``iat`` more than :data:`CLOCK_SKEW` (60 s) in the future.

A verified token is remembered until it expires, so a busy player's token is
checked once, not on every call (what was checked can only still hold: its
lifetime only shrinks). Signing is the protocol's
(:func:`truc_protocol.tokens.issue_token`, re-exported here).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Final

import jwt

from truc_protocol.display_names import display_name_problem, normalized_display_name
from truc_protocol.errors import PermissionDenied, Unauthenticated
from truc_protocol.identifiers import PLAYER_ID_ALPHABET, game_id_of, valid_player_id
from truc_protocol.tokens import STREAM_SCOPE, issue_token

__all__ = [
    "ALGORITHM",
    "CACHE_LIMIT",
    "CLOCK_SKEW",
    "MAX_LIFETIME",
    "STREAM_SCOPE",
    "STREAM_TOKEN_WATCH_ONLY",
    "Identity",
    "TokenVerifier",
    "bearer_token",
    "checked_display_name",
    "checked_expiry",
    "checked_game",
    "checked_player",
    "full_token",
    "issue_token",
]

ALGORITHM: Final = "HS256"
MAX_LIFETIME: Final = 30 * 86400
"""The default longest a token may still be valid, in seconds (30 days)."""
CLOCK_SKEW: Final = 60
"""How far in the future a token's ``iat`` may be (the issuer's clock ahead of ours)."""
STREAM_TOKEN_WATCH_ONLY: Final = "STREAM_TOKEN_WATCH_ONLY"
"""PERMISSION_DENIED: a stream token sent to another RPC than a watch stream."""
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
    stream_only: bool = False
    """A stream token (claim ``scope`` = ``"stream"``): short-lived, for stream
    URLs; the services accept it where they say so only."""
    display_name: str = ""
    """The claim ``name``: the player's display name (checked by
    :func:`truc_protocol.display_names.display_name_problem`); empty when the
    token has none."""
    game: str | None = None
    """The claim ``game`` of a spectator grant (role ``spectator`` only):
    ``"games/{game}"``, the one game the token may watch and replay. None: any
    game (a spectator token without the claim) or not a spectator."""


def bearer_token(header: str | None) -> str:
    """The token of an ``authorization: Bearer <token>`` value; TOKEN_MISSING or
    TOKEN_INVALID (Unauthenticated) if there is none or it is not that shape."""
    if not header:
        raise Unauthenticated(
            "TOKEN_MISSING",
            "send 'authorization: Bearer <token>' (an HTTP header, or gRPC metadata)",
        )
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise Unauthenticated(
            "TOKEN_INVALID",
            "the authorization value (an HTTP header, or gRPC metadata) must be 'Bearer <token>'",
        )
    return token


class TokenVerifier:
    """Checks ``authorization: Bearer <jwt>`` metadata values."""

    def __init__(
        self,
        secret: str,
        *,
        issuer: str,
        audience: str,
        cache_limit: int = CACHE_LIMIT,
        max_lifetime: float = MAX_LIFETIME,
    ) -> None:
        self._secret = secret
        self._issuer = issuer
        self._audience = audience
        self._cache_limit = cache_limit
        self._max_lifetime = max_lifetime
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
                # iat is checked below, with CLOCK_SKEW (PyJWT allows none).
                options={"require": ["exp", "sub", "iss", "aud"], "verify_iat": False},
            )
        except jwt.ExpiredSignatureError:
            raise Unauthenticated("TOKEN_EXPIRED", "the token has expired; sign in again") from None
        except jwt.PyJWTError as exc:
            raise Unauthenticated("TOKEN_INVALID", f"the token is not valid: {exc}") from None
        identity = self._identity(claims, now)
        if len(self._verified) >= self._cache_limit:
            self._verified.clear()
        self._verified[token] = identity
        return identity

    def _identity(self, claims: dict[str, object], now: float) -> Identity:
        """Who verified ``claims`` name, or TOKEN_INVALID saying which claim is wrong."""
        player, role, scope = claims["sub"], claims.get("role", "player"), claims.get("scope")
        issued = claims.get("iat")
        player = checked_player(player)
        if role not in ("player", "lobby", "spectator"):
            raise Unauthenticated("TOKEN_INVALID", f"unknown role {str(role)[:40]!r}")
        if scope is not None and scope != STREAM_SCOPE:
            raise Unauthenticated(
                "TOKEN_INVALID", f"unknown scope {str(scope)[:40]!r} (only {STREAM_SCOPE!r})"
            )
        expires = checked_expiry(claims["exp"], now, self._max_lifetime)
        if issued is not None:
            if not isinstance(issued, int | float) or isinstance(issued, bool):
                raise Unauthenticated("TOKEN_INVALID", "the token's iat must be a number")
            if issued - now > CLOCK_SKEW:
                raise Unauthenticated(
                    "TOKEN_INVALID", f"the token was issued in the future (iat {issued:g})"
                )
        return Identity(
            player,
            str(role),
            expires,
            stream_only=scope == STREAM_SCOPE,
            display_name=checked_display_name(claims.get("name")),
            game=checked_game(claims.get("game"), str(role)),
        )


def checked_display_name(name: object) -> str:
    """A token's ``name`` claim (absent: ``""``) if it is a display name as
    stored (normalized, valid), else TOKEN_INVALID."""
    if name is None:
        return ""
    if not isinstance(name, str):
        raise Unauthenticated("TOKEN_INVALID", "the token's name must be a string")
    problem = display_name_problem(name)
    if problem is None and normalized_display_name(name) != name:
        problem = "a display name is stored in NFC, without surrounding white space"
    if problem is not None:
        raise Unauthenticated("TOKEN_INVALID", f"the token's name: {problem}")
    return name


def checked_game(game: object, role: str) -> str | None:
    """A token's ``game`` claim (absent: None) if it is ``"games/{game}"`` on a
    spectator's token, else TOKEN_INVALID."""
    if game is None:
        return None
    if role != "spectator":
        raise Unauthenticated("TOKEN_INVALID", "only a spectator's token may name a game")
    if not isinstance(game, str) or game_id_of(game) is None:
        raise Unauthenticated("TOKEN_INVALID", "the token's game must be 'games/{game}'")
    return game


def checked_player(player: object) -> str:
    """A token's ``sub`` if it is a player id of the safe alphabet, else TOKEN_INVALID."""
    if not isinstance(player, str) or not valid_player_id(player):
        raise Unauthenticated(
            "TOKEN_INVALID",
            f"the token's sub must be a player id: 1-128 of {PLAYER_ID_ALPHABET}",
        )
    return player


def checked_expiry(expires: object, now: float, max_lifetime: float) -> float:
    """A token's ``exp``, if it is a number at most ``max_lifetime`` seconds
    after ``now`` (``TRUC_MAX_TOKEN_SECONDS``), else TOKEN_INVALID."""
    if not isinstance(expires, int | float) or isinstance(expires, bool):
        raise Unauthenticated("TOKEN_INVALID", "the token's exp must be a number")
    if expires - now > max_lifetime:
        raise Unauthenticated(
            "TOKEN_INVALID",
            f"the token is valid for too long: it expires in more than "
            f"{max_lifetime:.0f} s (the longest a token may be valid, TRUC_MAX_TOKEN_SECONDS)",
        )
    return float(expires)


def full_token(identity: Identity, what: str) -> Identity:
    """``identity``, unless it is a stream token's (:attr:`Identity.stream_only`):
    PERMISSION_DENIED ``STREAM_TOKEN_WATCH_ONLY``, naming the watch streams it
    does open (``what``) and asking for the player's own token."""
    if identity.stream_only:
        raise PermissionDenied(
            STREAM_TOKEN_WATCH_ONLY,
            f"a stream token opens {what} only: send the player's own token",
        )
    return identity
