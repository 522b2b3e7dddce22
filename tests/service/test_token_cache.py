"""The token verifier remembers what it verified, within a bound: memory per
replica stays bounded however many tokens players bring (the soak saw the game
service's memory climb with the cache)."""

from __future__ import annotations

import pytest

from truc_service.tokens import TokenVerifier, issue_token

pytestmark = pytest.mark.unit

SECRET = "cache-secret-0123456789abcdef-0123456789"


def test_the_cache_of_verified_tokens_never_holds_more_than_its_limit() -> None:
    verifier = TokenVerifier(SECRET, issuer="truc-lobby", audience="truc-game", cache_limit=50)
    for i in range(500):
        token = issue_token(SECRET, f"p{i}", issuer="truc-lobby", audience="truc-game")
        assert verifier.verify(f"Bearer {token}").player == f"p{i}"
        assert verifier.cached <= 50
    again = issue_token(SECRET, "p499", issuer="truc-lobby", audience="truc-game")
    assert verifier.verify(f"Bearer {again}").player == "p499"  # still verified when forgotten
