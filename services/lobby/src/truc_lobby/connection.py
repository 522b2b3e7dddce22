"""The lobby's Redis client of ``REDIS_URL``: one server, or a Redis Cluster.

The same schemes as the game service (``truc_game.store.connection``, which
explains the cluster client's differences): ``redis://``/``rediss://`` for one
server, ``redis+cluster://``/``rediss+cluster://`` for any node of a Redis
Cluster. Every lobby key carries the hash tag ``{lobby}``, so on a cluster the
whole lobby lives in one slot of one node and every script and MGET stays there;
the cluster client still follows that slot when it moves (failover, resharding).
redis-py's cluster client cannot wait for a free connection (beyond its cap a
call fails at once), so on a cluster the lobby has no cap: it opens as many
connections to the node as its calls in flight need, which the lobby's light
load keeps small (the game service bounds its own, heavier, traffic by making
calls wait their turn instead).
Ticket watchers subscribe on a plain client of the URL's node: Redis Cluster
forwards every ``PUBLISH`` to every node.
"""

from __future__ import annotations

from typing import TypeAlias

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster
from redis.commands.core import AsyncScript

__all__ = ["RedisClient", "connect", "script", "subscriber"]

RedisClient: TypeAlias = Redis | RedisCluster

_CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
_TIMEOUT = 5.0


def _split(url: str) -> tuple[bool, str]:
    """(names a cluster, the URL with the scheme redis-py knows)."""
    scheme, sep, rest = url.partition("://")
    plain = _CLUSTER_SCHEMES.get(scheme.lower())
    return plain is not None, (plain or scheme) + sep + rest


def connect(url: str, *, max_connections: int) -> RedisClient:
    """On one server, at most ``max_connections`` connections (a call waits up to
    5 s for one); on a cluster, as many as needed (above)."""
    cluster, plain = _split(url)
    if cluster:
        client: RedisCluster = RedisCluster.from_url(plain, socket_connect_timeout=_TIMEOUT)
        return client
    pool = BlockingConnectionPool.from_url(
        url, max_connections=max_connections, timeout=_TIMEOUT, socket_connect_timeout=_TIMEOUT
    )
    return Redis(connection_pool=pool)


def subscriber(url: str, client: RedisClient) -> Redis:
    """``client`` on one server; on a cluster a plain client of the URL's node
    (close it apart)."""
    if isinstance(client, Redis):
        return client
    plain: Redis = Redis.from_url(_split(url)[1], socket_connect_timeout=_TIMEOUT)
    return plain


def script(client: RedisClient, source: str) -> AsyncScript:
    """``client.register_script(source)`` (typed for ``Redis`` only by redis-py;
    its cluster client routes EVALSHA by the keys' slot)."""
    return AsyncScript(client, source)  # type: ignore[arg-type]
