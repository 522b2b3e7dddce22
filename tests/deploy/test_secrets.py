"""Production refuses weak JWT keys, dev mode has one spelling rule, and the game
service bounds a token's lifetime: real ``python -m truc_game`` and
``python -m truc_lobby`` processes, and the committed manifests."""

from __future__ import annotations

import base64
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import grpc
import jwt
import pytest
from truc.v1 import game_service_pb2, lobby_service_pb2, lobby_service_pb2_grpc

from manifests import render
from tests.service.conftest import (
    SECRET,
    Replica,
    error_reason,
    redis_server,  # noqa: F401 - the shared fixture
    stub,
)
from truc_dev_redis import RedisServer
from truc_protocol.tokens import DEV_SECRET, issue_token
from truc_service.settings import KNOWN_KEYS

ROOT = Path(__file__).resolve().parents[2]
OVERLAY_KEY = "dev-only-NOT-SECRET-truc-jwt-key-committed-to-git"
SERVICES = {"truc_game": {}, "truc_lobby": {"TRUC_GAME_ADDRESS": "127.0.0.1:1"}}


def run_service(module: str, redis_url: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m module`` with ``env`` (and no dev mode or key from this process),
    until it exits (or 20 s: a service that starts is stopped by the timeout)."""
    environment = {
        k: v for k, v in os.environ.items() if k not in ("TRUC_JWT_SECRET", "TRUC_DEV_MODE")
    }
    environment.update(
        REDIS_URL=redis_url,
        TRUC_GAME_PORT="0",
        TRUC_LOBBY_PORT="0",
        TRUC_METRICS_PORT="0",
        **SERVICES[module],
        **env,
    )
    return subprocess.run(
        [sys.executable, "-m", module],
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )


def committed_jwt_keys() -> set[str]:
    """Every JWT key in deploy/: the rendered Secrets' jwt-secret, and any
    ``jwt-secret=`` literal in a file (an overlay not rendered by default)."""
    keys: set[str] = set()
    for overlay in ("base", "redis", "overlays/dev", "overlays/prod"):
        for manifest in render(overlay):
            if manifest["kind"] == "Secret" and "jwt-secret" in manifest.get("data", {}):
                keys.add(base64.b64decode(manifest["data"]["jwt-secret"]).decode())
    for path in (ROOT / "deploy").rglob("*"):
        if path.is_file() and path.suffix in (".yaml", ".yml", ".env", ".md", ".txt", ""):
            text = path.read_text(encoding="utf-8", errors="replace")
            keys.update(re.findall(r"jwt-secret=([^\s`'\"]+)", text))
    return keys


def test_every_jwt_key_committed_under_deploy_is_a_known_key() -> None:
    keys = committed_jwt_keys()
    assert OVERLAY_KEY in keys  # the search finds the dev overlay's
    placeholders = {k for k in keys if "$" in k or k.startswith("<")}  # README: "$(openssl ..."
    assert keys - placeholders <= KNOWN_KEYS
    assert DEV_SECRET in KNOWN_KEYS


@pytest.mark.parametrize("module", list(SERVICES))
@pytest.mark.parametrize(
    ("key", "why"),
    [
        (DEV_SECRET, "publicly known key (the built-in development key)"),
        (OVERLAY_KEY, "publicly known key (committed to git)"),
        ("k" * 31, "at least 32 bytes long"),
    ],
    ids=["dev-key", "overlay-key", "31-bytes"],
)
def test_a_service_refuses_a_weak_key_outside_dev_mode(
    module: str,
    key: str,
    why: str,
    redis_server: RedisServer,  # noqa: F811
) -> None:
    finished = run_service(module, redis_server.url, TRUC_JWT_SECRET=key)
    assert finished.returncode == 2, finished.stderr[-2000:]
    assert "TRUC_JWT_SECRET" in finished.stderr and why in finished.stderr, finished.stderr
    assert key not in finished.stderr  # the message names the variable, never the key
    assert "listening" not in finished.stderr + finished.stdout


@pytest.mark.parametrize("module", list(SERVICES))
def test_the_known_keys_are_accepted_in_dev_mode(
    module: str,
    redis_server: RedisServer,  # noqa: F811
) -> None:
    extra = {"TRUC_LOBBY_PORT": "0", **SERVICES[module]} if module == "truc_lobby" else {}
    started = Replica(
        redis_server.url, module=module, TRUC_DEV_MODE="1", TRUC_JWT_SECRET=OVERLAY_KEY, **extra
    )
    started.stop()


def test_a_32_byte_key_of_16_characters_is_long_enough(
    redis_server: RedisServer,  # noqa: F811
) -> None:
    key = "é" * 16  # 2 bytes each in UTF-8
    replica = Replica(redis_server.url, TRUC_JWT_SECRET=key)
    try:
        token = issue_token(key, "alice")
        with pytest.raises(grpc.RpcError) as caught:
            stub(replica.address).GetGame(
                game_service_pb2.GetGameRequest(name="games/none"),
                metadata=(("authorization", f"Bearer {token}"),),
            )
        assert caught.value.code() is grpc.StatusCode.NOT_FOUND
    finally:
        replica.stop()


@pytest.mark.parametrize("spelling", ["on", "TRUE", "Yes"])
def test_every_spelling_of_dev_mode_means_dev_mode_in_both_services(
    spelling: str,
    redis_server: RedisServer,  # noqa: F811
) -> None:
    """Without TRUC_JWT_SECRET, TRUC_DEV_MODE=on (TRUE, Yes) starts both services on the
    development key: the lobby signs with it, the game service accepts its tokens."""
    game = Replica(redis_server.url, TRUC_DEV_MODE=spelling, TRUC_JWT_SECRET="")
    try:
        lobby = Replica(
            redis_server.url,
            module="truc_lobby",
            TRUC_DEV_MODE=spelling,
            TRUC_JWT_SECRET="",
            TRUC_LOBBY_PORT="0",
            TRUC_GAME_ADDRESS=game.address,
        )
        try:
            for process in (game, lobby):
                assert "development mode" in process.log(), process.log()[-2000:]
            with grpc.insecure_channel(lobby.address) as channel:
                signed_in = lobby_service_pb2_grpc.LobbyServiceStub(channel).SignInGuest(
                    lobby_service_pb2.SignInGuestRequest(display_name="dev"), timeout=10
                )
            claims = jwt.decode(
                signed_in.token, DEV_SECRET, algorithms=["HS256"], audience="truc-game"
            )
            assert claims["sub"] == signed_in.player
            with pytest.raises(grpc.RpcError) as caught:
                stub(game.address).GetGame(
                    game_service_pb2.GetGameRequest(name="games/none"),
                    metadata=(("authorization", f"Bearer {signed_in.token}"),),
                    timeout=10,
                )
            assert caught.value.code() is grpc.StatusCode.NOT_FOUND  # authenticated
        finally:
            lobby.stop()
    finally:
        game.stop()


def game_call(replica: Replica, token: str) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        stub(replica.address).GetGame(
            game_service_pb2.GetGameRequest(name="games/none"),
            metadata=(("authorization", f"Bearer {token}"),),
            timeout=10,
        )
    return caught.value


def test_the_game_service_bounds_a_tokens_lifetime(
    redis_server: RedisServer,  # noqa: F811
) -> None:
    default = Replica(redis_server.url)
    short = Replica(redis_server.url, TRUC_MAX_TOKEN_SECONDS="600")
    try:
        forever = issue_token(SECRET, "alice", ttl_seconds=40 * 86400)
        error = game_call(default, forever)
        assert error.code() is grpc.StatusCode.UNAUTHENTICATED
        assert error_reason(error) == "TOKEN_INVALID" and "too long" in str(error.details())
        hour = issue_token(SECRET, "alice", ttl_seconds=3600)
        assert game_call(default, hour).code() is grpc.StatusCode.NOT_FOUND
        refused = game_call(short, hour)
        assert refused.code() is grpc.StatusCode.UNAUTHENTICATED, refused
        assert "600 s" in str(refused.details())
        assert game_call(short, issue_token(SECRET, "alice", ttl_seconds=500)).code() is (
            grpc.StatusCode.NOT_FOUND
        )
        future = issue_token(SECRET, "alice", now=time.time() + 600)
        assert error_reason(game_call(default, future)) == "TOKEN_INVALID"
        hostile = game_call(default, issue_token(SECRET, "bob\n\x1b[31m"))
        assert error_reason(hostile) == "TOKEN_INVALID" and "player id" in str(hostile.details())
    finally:
        default.stop()
        short.stop()
