"""CORS origins as the gateway reads them (``TRUC_GATEWAY_CORS_ORIGINS``), without
a server: exact origins, ``scheme://host:*`` for any port, none by default."""

from __future__ import annotations

from truc_gateway.config import Settings
from truc_gateway.cors import CorsPolicy

DEV = "http://localhost:*, http://127.0.0.1:*, http://[::1]:*"
"""make serve's default (tools/stack.py DEV_CORS_ORIGINS), as an operator would write it."""


def _policy(origins: str | None) -> CorsPolicy:
    env = {} if origins is None else {"TRUC_GATEWAY_CORS_ORIGINS": origins}
    return CorsPolicy(Settings.from_env(env).cors_origins)


def test_any_port_of_a_host() -> None:
    policy = _policy(DEV + ", https://app.example")
    for origin in (
        "http://localhost:5173",
        "http://localhost",
        "http://127.0.0.1:3000",
        "http://[::1]:8000",
        "http://[::1]",
        "https://app.example",
        "https://app.example/",
    ):
        assert policy.allows(origin), origin
    for origin in (
        "https://localhost:5173",  # another scheme
        "http://localhost.evil.example:5173",
        "http://localhost:5173.evil.example",
        "http://evil.example:80",
        "http://127.0.0.2:3000",
        "http://[::2]:8000",
        "http://localhost:",
        "http://localhost:abc",
        "http://localhost:123456",
        "https://app.example:8443",  # an exact origin is one port
        "null",
    ):
        assert not policy.allows(origin), origin


def test_the_gateway_allows_no_origin_by_default() -> None:
    policy = _policy(None)
    assert not policy.allows("http://localhost:5173")
    assert not policy.allows("http://127.0.0.1:8080")
    assert _policy("*").allows("https://anything.example")
