"""The Redis client of ``REDIS_URL``, for the game service and the lobby: one
server, or a Redis Cluster.

``redis://`` and ``rediss://`` (TLS) name one server (a single primary, which
may be a managed service with failover); the client is a ``redis.asyncio.Redis``
on a blocking pool: a call waits (up to 5 s) for a free connection.

``redis+cluster://`` and ``rediss+cluster://`` name any node of a Redis Cluster
(a managed service's configuration endpoint is best): the client is a
``redis.asyncio.cluster.RedisCluster``, which learns the slot map from that node
and sends each command, script and pipeline part to the node owning its keys'
slot. Every key of a game carries its shard's hash tag
(``truc_game.adapters.redis_keys``) and every lobby key ``{lobby}``, so each Lua script
touches one slot. Differences to know:

* The cluster client keeps a pool per node and does not wait for a free
  connection (a call beyond the cap fails at once with ``MaxConnectionsError``).
  So the client here waits instead: at most ``max_connections`` calls are in
  flight (a call waits up to 5 s for its turn, as on the blocking pool of one
  server), and each holds at most one connection per node, so no node's pool
  of that size ever runs out.
* The cluster client has no pub/sub. Redis Cluster forwards every ``PUBLISH``
  (also from a script) to every node, so :func:`subscriber` opens a plain
  connection to the node of the URL and the watchers listen there.
* ``PING`` (the readiness probe) goes to every primary: NOT_SERVING while any
  node does not answer, since the games of its slots cannot be played.
* No MULTI/EXEC: what must be read or written together is one Lua script.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from typing import Any, TypeAlias

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

__all__ = [
    "CLUSTER_SCHEMES",
    "RedisClient",
    "connect",
    "follow_reachability",
    "is_cluster",
    "script",
    "subscriber",
]

RedisClient: TypeAlias = Redis | RedisCluster
"""What the stores take: either client runs the same commands and scripts."""

CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
"""URL schemes selecting the cluster client, and the scheme each stands for."""

_CONNECT_TIMEOUT = 5.0
_WAIT_SECONDS = 5.0

_holding: ContextVar[bool] = ContextVar("truc_redis_holding", default=False)
"""Whether this task already holds a turn (a pipeline re-sending a redirected
command, a command sent to several nodes): it then does not wait for another."""


class _WaitingCluster(RedisCluster):
    """A ``RedisCluster`` whose calls take turns: ``turns`` in flight at most."""

    turns: asyncio.Semaphore

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        if _holding.get():
            yield
            return
        try:
            async with asyncio.timeout(_WAIT_SECONDS):
                await self.turns.acquire()
        except TimeoutError:
            raise RedisConnectionError(
                f"no Redis cluster connection free for {_WAIT_SECONDS:g} s"
            ) from None
        token = _holding.set(True)
        try:
            yield
        finally:
            _holding.reset(token)
            self.turns.release()

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        async with self.turn():
            return await super().execute_command(*args, **kwargs)

    def pipeline(self, transaction: Any | None = None, shard_hint: Any | None = None) -> Any:
        if transaction or shard_hint:
            return super().pipeline(transaction, shard_hint)  # raises: not on a cluster
        return _WaitingPipeline(self)  # type: ignore[abstract]  # as redis-py itself does


class _WaitingPipeline(ClusterPipeline):
    _client: _WaitingCluster

    async def execute(self, raise_on_error: bool = True, allow_redirections: bool = True) -> Any:
        async with self._client.turn():
            return await super().execute(raise_on_error, allow_redirections)


def is_cluster(url: str) -> bool:
    """Whether ``url`` names a Redis Cluster (a ``*+cluster://`` scheme)."""
    return url.partition("://")[0].lower() in CLUSTER_SCHEMES


def _plain(url: str) -> str:
    """``url`` with a cluster scheme replaced by the one redis-py knows."""
    scheme, sep, rest = url.partition("://")
    return CLUSTER_SCHEMES.get(scheme.lower(), scheme) + sep + rest


def connect(url: str, *, max_connections: int) -> RedisClient:
    """The client for ``url``: at most ``max_connections`` connections (per node
    of a cluster). Nothing is connected until the first command."""
    if is_cluster(url):
        cluster: _WaitingCluster = _WaitingCluster.from_url(
            _plain(url),
            max_connections=max_connections,
            socket_connect_timeout=_CONNECT_TIMEOUT,
        )
        cluster.turns = asyncio.Semaphore(max_connections)
        return cluster
    pool = BlockingConnectionPool.from_url(
        url,
        max_connections=max_connections,
        timeout=_CONNECT_TIMEOUT,
        socket_connect_timeout=_CONNECT_TIMEOUT,
    )
    return Redis(connection_pool=pool)


def subscriber(url: str, client: RedisClient) -> Redis:
    """A client for pub/sub: ``client`` itself on one server; on a cluster, a
    plain client of the URL's node (which receives every node's publications).
    Close it apart from ``client`` when it is not ``client``."""
    if isinstance(client, Redis):
        return client
    plain: Redis = Redis.from_url(_plain(url), socket_connect_timeout=_CONNECT_TIMEOUT)
    return plain


def script(client: RedisClient, source: str) -> AsyncScript:
    """``client.register_script(source)``: EVALSHA (loading the script on a
    NOSCRIPT), sent to the node of the keys' slot on a cluster. redis-py types
    ``register_script`` for ``Redis`` only; its cluster client supports it."""
    return AsyncScript(client, source)  # type: ignore[arg-type]


async def follow_reachability(
    client: RedisClient,
    changed: Callable[[bool, bool], Awaitable[None]],
    *,
    every: float = 1.0,
    timeout: float = 2.0,
) -> None:
    """PING ``client`` every ``every`` seconds, forever; ``changed(reachable, first)``
    is awaited after the first PING and whenever the answer flips (the services
    turn it into their readiness: NOT_SERVING while Redis does not answer)."""
    reachable: bool | None = None
    while True:
        try:
            await asyncio.wait_for(client.ping(), timeout=timeout)
            ok = True
        except (RedisError, OSError, TimeoutError):
            ok = False
        if ok != reachable:
            await changed(ok, reachable is None)
            reachable = ok
        await asyncio.sleep(every)
