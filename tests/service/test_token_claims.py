"""What a token may claim: a bounded lifetime, no issue date in the future, a
``sub`` of the player id alphabet, a known ``scope`` (``stream``: a stream token).
Unit tests of the kit's verifier, the one JWT check of the game service and the
lobby (test_token_lifetime_service.py runs the game service on them)."""

from __future__ import annotations

import time

import jwt
import pytest

from truc_protocol.errors import Unauthenticated
from truc_service.tokens import (
    CLOCK_SKEW,
    MAX_LIFETIME,
    STREAM_SCOPE,
    TokenVerifier,
    issue_token,
)

pytestmark = pytest.mark.unit

SECRET = "claims-secret-0123456789abcdef-0123456789"
DAY = 86400


def verifier(**kwargs: float) -> TokenVerifier:
    return TokenVerifier(SECRET, issuer="truc-lobby", audience="truc-game", **kwargs)  # type: ignore[arg-type]


def signed(**claims: object) -> str:
    now = int(time.time())
    base: dict[str, object] = {
        "sub": "alice",
        "iss": "truc-lobby",
        "aud": "truc-game",
        "iat": now,
        "exp": now + 3600,
    }
    base.update(claims)
    return "Bearer " + jwt.encode(
        {k: v for k, v in base.items() if v is not None}, SECRET, algorithm="HS256"
    )


def refused(header: str, check: TokenVerifier | None = None) -> Unauthenticated:
    with pytest.raises(Unauthenticated) as caught:
        (check or verifier()).verify(header)
    assert caught.value.reason == "TOKEN_INVALID", caught.value
    return caught.value


def test_the_default_lifetime_is_thirty_days() -> None:
    assert MAX_LIFETIME == 30 * DAY
    assert verifier().verify(signed(exp=int(time.time()) + 30 * DAY - 60)).player == "alice"
    error = refused(signed(exp=int(time.time()) + 30 * DAY + 60))
    assert "valid for too long" in error.message and "2592000 s" in error.message


def test_a_token_for_the_year_3000_is_refused() -> None:
    refused(signed(exp=32503680000))


def test_the_lifetime_is_the_verifiers() -> None:
    short = verifier(max_lifetime=600)
    assert short.verify(signed(exp=int(time.time()) + 500)).player == "alice"
    assert "600 s" in refused(signed(exp=int(time.time()) + 700), short).message
    long = verifier(max_lifetime=365 * DAY)
    assert long.verify(signed(exp=int(time.time()) + 300 * DAY)).player == "alice"


def test_an_issue_date_in_the_future_is_refused_beyond_the_clock_skew() -> None:
    now = int(time.time())
    assert verifier().verify(signed(iat=now + CLOCK_SKEW - 5)).player == "alice"
    assert "issued in the future" in refused(signed(iat=now + CLOCK_SKEW + 30)).message
    assert "iat must be a number" in refused(signed(iat="soon")).message
    assert verifier().verify(signed(iat=None)).player == "alice"  # iat is optional


def test_sub_must_be_a_player_id() -> None:
    for bad in ("", "a b", "bob\n", "x\x1b[31m", "é", "a" * 129, "a/b", 'q"'):
        assert "player id" in refused(signed(sub=bad)).message, repr(bad)
    refused(signed(sub=12))
    for good in ("alice", "auth0|5f3c", "g:ab12.cd-EF_9@x+y", "a" * 128):
        assert verifier().verify(signed(sub=good)).player == good


def test_a_stream_token_is_marked_and_other_scopes_are_refused() -> None:
    token = issue_token(SECRET, "alice", scope=STREAM_SCOPE, ttl_seconds=60)
    identity = verifier().verify("Bearer " + token)
    assert identity.stream_only and identity.player == "alice" and identity.role == "player"
    assert not verifier().verify("Bearer " + issue_token(SECRET, "alice")).stream_only
    for scope in ("admin", "", "STREAM", ["stream"]):
        assert "scope" in refused(signed(scope=scope)).message, scope


def test_issue_token_writes_the_scope_only_when_given() -> None:
    plain = jwt.decode(issue_token(SECRET, "bob"), options={"verify_signature": False})
    assert "scope" not in plain
    streamed = jwt.decode(
        issue_token(SECRET, "bob", scope=STREAM_SCOPE), options={"verify_signature": False}
    )
    assert streamed["scope"] == "stream"


def test_a_cached_token_keeps_its_checks() -> None:
    check = verifier(max_lifetime=600)
    header = signed(exp=int(time.time()) + 700)
    for _ in range(2):  # refused again, not remembered
        refused(header, check)
    assert check.cached == 0
