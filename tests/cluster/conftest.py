"""A real Redis Cluster for the tests: three primaries (Valkey in cluster mode,
the bundled binary), on free loopback ports, no root, torn down afterwards."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest
import redis

from tests.service.conftest import free_port
from truc_dev_redis import RedisServer, RedisServerStartError, find_redis_server

_BUS_OFFSET = 10_000  # a node's cluster bus listens on its port + 10000


class RedisClusterNodes:
    """Three primaries sharing the 16384 slots (``valkey-cli --cluster create``)."""

    def __init__(self, size: int = 3) -> None:
        self.nodes: list[RedisServer] = []
        try:
            for _ in range(size):  # one password for all: the client sends it to every node
                self.nodes.append(_start_node(self.nodes[0].password if self.nodes else None))
            cli = find_redis_server().parent / "valkey-cli"
            created = subprocess.run(
                [
                    str(cli),
                    "--cluster",
                    "create",
                    *(f"127.0.0.1:{node.port}" for node in self.nodes),
                    "--cluster-replicas",
                    "0",
                    "--cluster-yes",
                ],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
                env={**os.environ, "REDISCLI_AUTH": self.nodes[0].password},
            )
            if created.returncode != 0:
                raise RuntimeError(f"cluster create failed:\n{created.stdout}\n{created.stderr}")
            self._wait_formed()
        except BaseException:
            self.stop()
            raise

    @property
    def url(self) -> str:
        """``redis+cluster://`` of the first node: the services find the others."""
        return self.nodes[0].url_with(scheme="redis+cluster")

    def client(self, index: int) -> redis.Redis:
        return redis.Redis.from_url(self.nodes[index].url)

    def _wait_formed(self, timeout: float = 20.0) -> None:
        """Until every node says the cluster is ok and sees every other node
        connected (so a PUBLISH reaches every node)."""
        deadline = time.monotonic() + timeout
        while True:
            if all(self._formed(i) for i in range(len(self.nodes))):
                return
            if time.monotonic() > deadline:
                raise RuntimeError("the cluster did not form in time")
            time.sleep(0.1)

    def _formed(self, index: int) -> bool:
        with self.client(index) as node:
            if node.cluster("INFO")["cluster_state"] != "ok":
                return False
            lines = node.execute_command("CLUSTER", "NODES").decode().splitlines()
        return len(lines) == len(self.nodes) and all(
            " connected" in line and "handshake" not in line for line in lines
        )

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


def _start_node(password: str | None) -> RedisServer:
    """A cluster-enabled node on a port whose bus port (+10000) is free too."""
    for _ in range(20):
        port = free_port()
        if port + _BUS_OFFSET > 65_535 or not _free(port + _BUS_OFFSET):
            continue
        with contextlib.suppress(RedisServerStartError):  # taken meanwhile: try another
            return RedisServer(
                port=port,
                password=password,
                options=("--cluster-enabled", "yes", "--cluster-node-timeout", "5000"),
            ).start()
    raise RuntimeError("no free pair of ports for a cluster node")


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.fixture(scope="module")
def redis_cluster() -> Iterator[RedisClusterNodes]:
    cluster = RedisClusterNodes()
    yield cluster
    cluster.stop()
