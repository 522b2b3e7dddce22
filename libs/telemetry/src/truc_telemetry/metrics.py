"""Prometheus metrics both services expose, and the HTTP endpoint that serves them.

Series (each service adds its own, see its ``metrics`` module; all are listed
in the README's Observability section):

* ``truc_rpc_duration_seconds{service,method,code}`` (histogram): RPCs handled
  and how long each took (a watch: how long it stayed open); its ``_count`` is
  the number of RPCs by status code.
* ``truc_watch_streams{service,method}`` (gauge): server-streaming RPCs
  (watches) open now on this replica.
* ``truc_redis_duration_seconds{op}`` (histogram): store calls, each one Redis
  round trip (a Lua script or a pipeline).

plus the client library's ``process_*`` and ``python_*`` series.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

import prometheus_client
from prometheus_client import Gauge, Histogram

from . import tracing

__all__ = ["LATENCY_BUCKETS", "REDIS_SECONDS", "RPC_SECONDS", "WATCH_STREAMS", "serve", "timed"]

LATENCY_BUCKETS = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1,
    2.5,
    5,
    10,
    60,
)
"""Histogram buckets (seconds) of calls and requests: RPCs here, the gateway's HTTP too."""

RPC_SECONDS = Histogram(
    "truc_rpc_duration_seconds",
    "RPCs handled, by service, method and status code, and how long they took "
    "(server-streaming RPCs: how long they stayed open).",
    ["service", "method", "code"],
    buckets=LATENCY_BUCKETS,
)
WATCH_STREAMS = Gauge(
    "truc_watch_streams",
    "Server-streaming RPCs (watches) open now on this replica.",
    ["service", "method"],
)
REDIS_SECONDS = Histogram(
    "truc_redis_duration_seconds",
    "Store calls, each one Redis round trip (a Lua script or a pipeline), by operation.",
    ["op"],
    buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1),
)

_P = ParamSpec("_P")
_R = TypeVar("_R")


def timed(op: str) -> Callable[[Callable[_P, Awaitable[_R]]], Callable[_P, Awaitable[_R]]]:
    """Decorate a store method: its time goes to ``truc_redis_duration_seconds{op}``
    and, while tracing is on, it is a span below the RPC's."""
    observe = REDIS_SECONDS.labels(op).observe

    def decorate(call: Callable[_P, Awaitable[_R]]) -> Callable[_P, Awaitable[_R]]:
        @functools.wraps(call)
        async def measured(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            start = time.perf_counter()
            try:
                if tracing.tracer is None:
                    return await call(*args, **kwargs)
                with tracing.store_span(op):
                    return await call(*args, **kwargs)
            finally:
                observe(time.perf_counter() - start)

        return measured

    return decorate


def serve(host: str, port: int, log: logging.Logger) -> Callable[[], None] | None:
    """Serve ``/metrics`` over HTTP on ``host:port`` (-1: any free port) in a thread
    and log ``metrics on http://HOST:PORT/metrics``; returns how to stop it.

    A port already taken is logged as an error and leaves the service running
    without the endpoint (returns None): metrics are not worth an outage."""
    prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]
    try:
        server, thread = prometheus_client.start_http_server(max(port, 0), addr=host)
    except OSError as exc:
        log.error("metrics: cannot listen on %s:%d (%s); no metrics endpoint", host, port, exc)
        return None
    log.info("metrics on http://%s:%d/metrics", host, server.server_port)

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(5)

    return stop
