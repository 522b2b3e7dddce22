"""Two kinds of tests, told apart by a marker (``make test`` runs both):

* ``unit``: pure code and use cases, in this process only: no server, no
  Redis, no network, no child process but a Python interpreter. Fast: ``make
  test-unit`` is the inner loop. Every test is a unit test unless it is marked
  ``integration``; the guard below makes a unit test that opens a network
  socket or starts another program fail, so the marker cannot lie.
* ``integration``: real Redis and real gRPC/HTTP/WebSocket processes over
  sockets. A whole folder is integration when its tests start processes
  (:data:`INTEGRATION_FOLDERS`); a file elsewhere says so with
  ``pytestmark = pytest.mark.integration``, and a pure file inside such a folder
  with ``pytestmark = pytest.mark.unit``.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent

INTEGRATION_FOLDERS = frozenset(
    (
        "bots",
        "browser",
        "chaos",
        "client",
        "cluster",
        "deploy",
        "gateway",
        "lobby_service",
        "node",
        "observability",
        "service",
    )
)
"""Folders whose tests start Redis and the services (files may opt out with ``unit``)."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "unit: pure code and use cases, no processes (default)")
    config.addinivalue_line("markers", "integration: real Redis and gRPC/HTTP processes")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        marked = {m.name for m in item.iter_markers()}
        if "unit" in marked or "integration" in marked:
            continue
        folder = Path(str(item.fspath)).relative_to(HERE).parts[0]
        item.add_marker("integration" if folder in INTEGRATION_FOLDERS else "unit")


class _NotInAUnitTest(AssertionError):
    pass


@pytest.fixture(autouse=True)
def _unit_tests_start_no_processes(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """In a unit test, connecting or binding a network socket, or starting a
    program other than this Python, fails the test."""
    if request.node.get_closest_marker("integration") is not None:
        yield
        return

    def refuse_socket(self: socket.socket, *args: Any, **kwargs: Any) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            raise _NotInAUnitTest("a unit test opened a network socket: mark it integration")
        return original_connect(self, *args, **kwargs)

    original_connect = socket.socket.connect
    original_popen_init = subprocess.Popen.__init__

    def refuse_program(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        program = args[0] if isinstance(args, list | tuple) else args
        if str(program) != sys.executable:
            raise _NotInAUnitTest(f"a unit test started {program!r}: mark it integration")
        original_popen_init(self, args, *rest, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", refuse_socket)
    monkeypatch.setattr(socket.socket, "bind", refuse_socket)
    monkeypatch.setattr(subprocess.Popen, "__init__", refuse_program)
    yield
