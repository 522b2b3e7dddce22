"""The bundled Redis is nobody else's: a random password per start (carried in
its URL, on no command line, in no output), protected mode on, the loopback only.
Real servers, real clients."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
import redis

from tests.service.test_redis_server import raw_ping
from truc_dev_redis import RedisServer


def test_a_client_without_the_password_is_refused_and_the_url_works() -> None:
    with RedisServer() as server:
        assert raw_ping(server.port).startswith(b"-NOAUTH"), "PING without AUTH answered"
        anonymous = redis.Redis(host="127.0.0.1", port=server.port)
        with anonymous, pytest.raises(redis.AuthenticationError):
            anonymous.get("truc:anything")
        wrong = redis.Redis.from_url(server.url.replace("@", "x@", 1))
        with wrong, pytest.raises(redis.AuthenticationError):
            wrong.ping()
        with redis.Redis.from_url(server.url) as client:
            assert client.set("truc:k", "v") and client.get("truc:k") == b"v"


def test_protected_mode_is_on_and_only_the_loopback_is_bound() -> None:
    with RedisServer() as server, redis.Redis.from_url(server.url) as client:
        assert client.config_get("protected-mode") == {"protected-mode": "yes"}
        assert client.config_get("bind")["bind"] == "127.0.0.1"
        assert client.config_get("requirepass")["requirepass"] == server.password
        assert client.config_get("masterauth")["masterauth"] == server.password


def test_each_start_draws_a_fresh_password() -> None:
    server = RedisServer()
    with server:
        first = server.password
    with server, RedisServer() as other:
        assert len({first, server.password, other.password}) == 3
        assert len(first) >= 32  # token_urlsafe(24): 192 random bits
        old = redis.Redis(host="127.0.0.1", port=server.port, password=first)
        with old, pytest.raises(redis.AuthenticationError):
            old.ping()  # the previous run's password opens nothing


def test_a_given_password_is_kept_across_restarts() -> None:
    with RedisServer() as first:
        password, port = first.password, first.port
    with RedisServer(port=port, password=password) as again:
        assert again.url == f"redis://:{password}@127.0.0.1:{port}/0"
        assert raw_ping(port, password) == b"+PONG\r\n"
    with pytest.raises(ValueError, match="password"):
        RedisServer(password="has space")


def test_the_password_is_on_no_command_line_and_in_private_files_only() -> None:
    with RedisServer() as server:
        command_line = Path(f"/proc/{server.pid}/cmdline").read_bytes()
        assert server.password.encode() not in command_line
        for name in ("redis.conf", "redis-url"):
            mode = (server.directory / name).stat().st_mode
            assert stat.S_IMODE(mode) == 0o600, name
        assert server.url_file.read_text().strip() == server.url
        assert server.redacted_url == f"redis://:***@127.0.0.1:{server.port}/0"
        assert server.password not in repr(server)
        assert server.password not in (server.directory / "server.log").read_text()


def test_url_with_names_a_proxy_port_or_a_cluster_scheme() -> None:
    with RedisServer() as server:
        password = server.password
        assert server.url_with(port=1234) == f"redis://:{password}@127.0.0.1:1234/0"
        assert server.url_with(scheme="redis+cluster").startswith(f"redis+cluster://:{password}@")
    assert server.url_with(port=1234) == f"redis://:{password}@127.0.0.1:1234/0"  # stopped
