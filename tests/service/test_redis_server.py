"""The development Redis server: real processes on real ports, no mocks."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from truc_dev_redis import (
    ENV_BINARY,
    RedisServer,
    RedisServerNotFound,
    RedisServerStartError,
    find_redis_server,
)


def raw_ping(port: int, password: str = "", host: str = "127.0.0.1") -> bytes:
    """PING written by hand in the Redis protocol (after AUTH ``password`` if
    given); returns the reply line."""
    with socket.create_connection((host, port), timeout=2) as sock, sock.makefile("rb") as stream:
        if password:
            secret = password.encode()
            sock.sendall(b"*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n" % (len(secret), secret))
            assert stream.readline() == b"+OK\r\n"
        sock.sendall(b"*1\r\n$4\r\nPING\r\n")
        return stream.readline()


def refuses_connections(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except ConnectionRefusedError:
        return True
    return False


def port_is_bindable(port: int) -> bool:
    with socket.socket() as sock:
        # SO_REUSEADDR, as servers set it: only a socket still listening blocks the bind.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def fake_server(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "fake-redis-server"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return script


def test_a_server_starts_on_a_free_port_and_answers_ping() -> None:
    with RedisServer() as server:
        assert server.running
        assert 0 < server.port < 65536
        assert server.url == f"redis://:{server.password}@127.0.0.1:{server.port}/0"
        assert process_exists(server.pid)
        assert re.fullmatch(r"\d+\.\d+\.\d+", server.server_version)
        assert raw_ping(server.port, server.password) == b"+PONG\r\n"


def test_set_and_get_through_redis_py() -> None:
    redis = pytest.importorskip("redis")
    with RedisServer() as server:
        client = redis.Redis.from_url(server.url)
        try:
            assert client.set("truc:greeting", "bon jorn")
            assert client.get("truc:greeting") == b"bon jorn"
        finally:
            client.close()


def test_two_servers_at_once_get_different_ports() -> None:
    with RedisServer() as first, RedisServer() as second:
        assert first.port != second.port
        assert first.pid != second.pid
        assert raw_ping(first.port, first.password) == b"+PONG\r\n"
        assert raw_ping(second.port, second.password) == b"+PONG\r\n"


def test_stop_is_idempotent_frees_the_port_and_removes_the_temporary_directory() -> None:
    server = RedisServer().start()
    port, pid, directory = server.port, server.pid, server.directory
    assert (directory / "server.log").is_file()
    server.stop()
    server.stop()
    assert not server.running
    assert not process_exists(pid)
    assert refuses_connections(port)
    assert port_is_bindable(port)
    assert not directory.exists()


def test_a_stopped_server_can_be_started_again() -> None:
    server = RedisServer()
    with server:
        first_pid = server.pid
    with server:
        assert server.pid != first_pid
        assert raw_ping(server.port, server.password) == b"+PONG\r\n"


def test_kill_makes_the_process_disappear_at_once() -> None:
    server = RedisServer().start()
    port, pid = server.port, server.pid
    server.kill()
    assert not process_exists(pid)
    assert refuses_connections(port)
    server.stop()  # nothing left to stop


def test_a_server_that_died_by_itself_can_be_started_again() -> None:
    server = RedisServer().start()
    try:
        os.kill(server.pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while server.running and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not server.running
        server.start()
        assert raw_ping(server.port, server.password) == b"+PONG\r\n"
    finally:
        server.stop()


@pytest.mark.parametrize("shutdown", ["stop", "kill"])
def test_appendonly_data_survives_a_restart_on_the_same_directory(
    tmp_path: Path, shutdown: str
) -> None:
    redis = pytest.importorskip("redis")
    server = RedisServer(data_dir=tmp_path, appendonly=True).start()
    client = redis.Redis.from_url(server.url)
    try:
        if shutdown == "kill":
            # Every write reaches the disk before it is acknowledged, so a crash loses nothing.
            client.config_set("appendfsync", "always")
        client.set("truc:score", "12")
    finally:
        client.close()
    server.stop() if shutdown == "stop" else server.kill()
    assert tmp_path.is_dir()  # a given data directory is kept

    with RedisServer(data_dir=tmp_path, appendonly=True) as restarted:
        client = redis.Redis.from_url(restarted.url)
        try:
            assert client.get("truc:score") == b"12"
        finally:
            client.close()


def test_the_binary_is_found_and_executable() -> None:
    binary = find_redis_server()
    assert binary.name in {"redis-server", "valkey-server"}
    assert os.access(binary, os.X_OK)


def test_a_missing_binary_named_by_the_environment_is_a_helpful_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "no-such-redis-server"
    monkeypatch.setenv(ENV_BINARY, str(missing))
    with pytest.raises(RedisServerNotFound) as caught:
        find_redis_server()
    message = str(caught.value)
    assert str(missing) in message
    assert ENV_BINARY in message
    assert "make venv" in message
    with pytest.raises(RedisServerNotFound):
        RedisServer()


def test_the_binary_named_by_the_environment_is_used_and_made_executable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = fake_server(tmp_path, "exit 0")
    script.chmod(0o644)
    monkeypatch.setenv(ENV_BINARY, str(script))
    assert find_redis_server() == script
    assert os.access(script, os.X_OK)


def test_a_binary_that_exits_at_once_is_a_quick_clear_error() -> None:
    started = time.monotonic()
    with pytest.raises(RedisServerStartError, match=r"/bin/false exited with status 1"):
        RedisServer(binary=Path("/bin/false")).start()
    assert time.monotonic() - started < 2


def test_the_error_quotes_what_the_server_printed(tmp_path: Path) -> None:
    script = fake_server(tmp_path, "echo 'bad config line 3' >&2; exit 3")
    with pytest.raises(RedisServerStartError, match=r"status 3.*\n.*bad config line 3"):
        RedisServer(binary=script).start()


def test_a_server_that_never_answers_times_out_and_is_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = fake_server(tmp_path, f"echo $$ > {pid_file}; echo 'stuck' >&2; exec sleep 30")
    with pytest.raises(
        RedisServerStartError, match=r"(?s)did not answer PING .* within 0.3 s.*stuck"
    ):
        RedisServer(binary=script, startup_timeout=0.3).start()
    assert not process_exists(int(pid_file.read_text()))


def test_a_port_already_in_use_is_reported() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(RedisServerStartError, match="already in use"):
            RedisServer(port=port).start()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_the_command_runs_a_server_until_a_signal(signum: signal.Signals) -> None:
    command = subprocess.Popen(
        [sys.executable, "-m", "truc_dev_redis"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert command.stdout is not None
        line = command.stdout.readline()
        match = re.fullmatch(
            r"redis listening on redis://:\*\*\*@127\.0\.0\.1:(\d+)/0 "
            r"\((redis|valkey)-server \d+\.\d+\.\d+ from /.+\); "
            r"the URL with its password is in (/\S+) \(yours only\)\n",
            line,
        )
        assert match, line
        port = int(match.group(1))
        url = Path(match.group(3)).read_text().strip()
        password = url.removeprefix("redis://:").partition("@")[0]
        assert url == f"redis://:{password}@127.0.0.1:{port}/0"
        assert len(password) >= 32 and password not in line  # printed redacted only
        assert raw_ping(port, password) == b"+PONG\r\n"
        command.send_signal(signum)
        assert command.wait(timeout=5) == 0
        assert refuses_connections(port)
    finally:
        if command.poll() is None:
            command.kill()
        _, errors = command.communicate()
    assert password not in errors
