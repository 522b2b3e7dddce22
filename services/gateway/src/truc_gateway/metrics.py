"""The gateway's Prometheus series, served on ``TRUC_METRICS_PORT`` by
:func:`truc_telemetry.metrics.serve` (listed in the README's Observability section).

* ``truc_gateway_http_duration_seconds{route,method,status}`` (histogram): HTTP
  requests answered, how long each took (an SSE stream: how long it stayed
  open); its ``_count`` counts requests. ``route`` is bounded: the RPC's name
  (``SubmitAction``), ``healthz``, ``openapi``, ``web`` (the web app's files:
  ``/``, ``/app/...``), ``guide``, ``preflight`` (a CORS ``OPTIONS``) or
  ``unknown`` (no route for that path and method: 404, 405) —
  never the raw path. ``method`` is the HTTP method (``other`` beyond the
  standard ones); ``status`` the HTTP status (``499``: the client went away).
* ``truc_gateway_sse_streams{route}`` (gauge): SSE streams open now.
* ``truc_gateway_sse_events_total{route,event}`` (counter): SSE events sent:
  ``message`` (one streamed message), ``end``, ``error``.
* ``truc_gateway_websocket_sessions{route}`` (gauge): WebSocket sessions open now.
* ``truc_gateway_websocket_frames_total{route,direction}`` (counter): WebSocket
  text frames, ``received`` from clients and ``sent`` to them.
* ``truc_gateway_websocket_closes_total{route,code}`` (counter): WebSocket
  sessions ended, by close code (``1000`` the match ended, ``1001`` the gateway
  stopped, ``4000`` + an HTTP status after an error frame, ...: see
  :mod:`truc_gateway.websocket`); ``1006`` when the connection broke unclosed.
* ``truc_gateway_upstream_duration_seconds{service,method,code}`` (histogram):
  the gRPC calls the gateway made, by service (``truc.v1.GameService``), method
  and status code, as the services' ``truc_rpc_duration_seconds`` has them but
  seen from the gateway (the hop included). A series of its own, not
  ``truc_rpc_duration_seconds{service="gateway"}``: that one counts RPCs
  *handled*, and summing it over the stack must not count a call twice.

The label children are looked up once and kept (:class:`Children`): a request
costs a dictionary lookup and an observation.
"""

from __future__ import annotations

from typing import Final

from prometheus_client import Counter, Gauge, Histogram

from truc_telemetry.metrics import LATENCY_BUCKETS

__all__ = [
    "HTTP_METHODS",
    "HTTP_SECONDS",
    "SSE_EVENTS",
    "SSE_STREAMS",
    "UNKNOWN_ROUTE",
    "UPSTREAM_SECONDS",
    "WS_CLOSES",
    "WS_FRAMES",
    "WS_SESSIONS",
    "Children",
    "method_label",
]

UNKNOWN_ROUTE: Final = "unknown"
"""The ``route`` of a request no route serves (404 ROUTE_NOT_FOUND, 405)."""
HTTP_METHODS: Final = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

HTTP_SECONDS = Histogram(
    "truc_gateway_http_duration_seconds",
    "HTTP requests answered by the gateway, by route (the RPC's name, or healthz, openapi, "
    "web, guide, preflight, unknown), HTTP method and status, and how long they took (SSE: "
    "how long the stream stayed open).",
    ["route", "method", "status"],
    buckets=LATENCY_BUCKETS,
)
SSE_STREAMS = Gauge(
    "truc_gateway_sse_streams",
    "Server-Sent Events streams open now on this gateway.",
    ["route"],
)
SSE_EVENTS = Counter(
    "truc_gateway_sse_events_total",
    "Server-Sent Events sent, by route and event (message, end, error).",
    ["route", "event"],
)
WS_SESSIONS = Gauge(
    "truc_gateway_websocket_sessions",
    "WebSocket sessions open now on this gateway.",
    ["route"],
)
WS_FRAMES = Counter(
    "truc_gateway_websocket_frames_total",
    "WebSocket text frames, by route and direction (received, sent).",
    ["route", "direction"],
)
WS_CLOSES = Counter(
    "truc_gateway_websocket_closes_total",
    "WebSocket sessions ended, by route and close code.",
    ["route", "code"],
)
UPSTREAM_SECONDS = Histogram(
    "truc_gateway_upstream_duration_seconds",
    "gRPC calls the gateway made to the services, by service, method and status code, "
    "and how long they took as the gateway saw them (streams: how long they stayed open).",
    ["service", "method", "code"],
    buckets=LATENCY_BUCKETS,
)


def method_label(method: str) -> str:
    """The HTTP method as a label value: bounded (``other`` for the rest)."""
    return method if method in HTTP_METHODS else "other"


class Children:
    """Label children of one series, made on first use and kept."""

    __slots__ = ("_children", "_series")

    def __init__(self, series: Histogram) -> None:
        self._series = series
        self._children: dict[tuple[str, ...], Histogram] = {}

    def observe(self, labels: tuple[str, ...], seconds: float) -> None:
        child = self._children.get(labels)
        if child is None:
            child = self._children[labels] = self._series.labels(*labels)
        child.observe(seconds)
