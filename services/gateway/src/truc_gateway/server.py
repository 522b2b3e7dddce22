"""The gateway process (``truc-gateway``): one aiohttp application in front of the
game service and the lobby.

Every request goes through :meth:`Gateway.dispatch`: match the route table
(404 ROUTE_NOT_FOUND, 405 METHOD_NOT_ALLOWED), answer CORS preflights, read the
body (at most ``TRUC_GATEWAY_MAX_BODY_BYTES``: 413 BODY_TOO_LARGE; JSON only:
415 UNSUPPORTED_MEDIA_TYPE), transcode it, forward the call with the caller's
``Authorization`` header and the client's address
(:mod:`truc_gateway.client_address`) as gRPC metadata, and answer with JSON, an
error (google.rpc.Status JSON) or an SSE stream. A streaming route also takes
``?access_token=``, a stream token only, or on a game's watch route that
game's spectator grant (:mod:`truc_gateway.stream_tokens`: else 401
TOKEN_IN_URL before any call). SSE streams and WebSockets count
against ``TRUC_GATEWAY_MAX_STREAMS_PER_ADDRESS`` per client address on this
replica (past it: 429 RATE_LIMITED with ``Retry-After``, before any call). A
bidirectional RPC (Play) is a WebSocket instead (:mod:`truc_gateway.websocket`):
the ``GET`` upgrades and the session is relayed frame by frame. ``GET
/openapi.json`` serves the OpenAPI document and ``GET /healthz`` the gateway's
own liveness; ``GET /``, ``/app/...`` and ``/guide`` the web app and the
player's guide (:mod:`truc_gateway.web_app`). A path naming a resource's
collection twice (``/v1/games/games/g``: a resource name pasted after its
collection) is 404 BAD_PATH, the message giving the path meant.

What a client can make the gateway hold is bounded: a request's head
(:data:`MAX_HEAD_LINE`, :data:`MAX_HEADERS`), its body
(``TRUC_GATEWAY_MAX_BODY_BYTES``; a WebSocket frame too), a connection without a
request in progress (``TRUC_GATEWAY_IDLE_SECONDS``: idle keep-alives and slowly
sent heads are closed), streams and sockets per address; JSON nesting (64
messages) and values (:mod:`truc_gateway.strict_json`).

Observed through :mod:`truc_telemetry`, as the services are: the series of
:mod:`truc_gateway.metrics` on ``TRUC_METRICS_PORT``; log lines (JSON unless
``TRUC_LOG_FORMAT=text``) carrying the request's context — ``request_id`` (the
``X-Request-Id`` header, else the request's ``request_id`` field: SubmitAction's
idempotency key), ``method`` (the RPC), ``game`` or ``ticket`` — with one
``request`` line per request at DEBUG (``route``, ``http_method``, ``path``,
``status``, ``ms``) and a warning for each 5xx. Neither tokens, query strings
nor bodies are logged. With tracing on, each request is a SERVER span and the
call it forwards a CLIENT span below it, whose ``traceparent`` goes to the
service as metadata.

Configured from the environment (:mod:`truc_gateway.config`) and run by the
kit (:func:`truc_service.process.run_service`). On SIGTERM or SIGINT: SSE
streams end (clients reconnect and resume), in-flight requests get
``TRUC_GATEWAY_GRACE_SECONDS``, then the channels close; WebSocket sessions
close 1001 (going away: clients resume elsewhere); a second signal exits at
once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, Final

import grpc
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from google.protobuf.message import Message

from truc_protocol.balancing import ROUND_ROBIN
from truc_protocol.errors import ServiceError
from truc_service.addresses import CLIENT_ADDRESS, counted_as, parse_address
from truc_service.limits import Concurrency
from truc_service.process import run_service
from truc_telemetry import logs, tracing
from truc_telemetry import metrics as telemetry

from .client_address import ClientAddresses
from .config import Settings
from .cors import CorsPolicy
from .errors import GatewayError, error_response, rpc_error_status, service_error
from .metrics import (
    HTTP_SECONDS,
    SSE_STREAMS,
    UNKNOWN_ROUTE,
    UPSTREAM_SECONDS,
    Children,
    method_label,
)
from .openapi import served_document
from .routes import Route, doubled_collection, most_specific, route_table
from .sse import StreamEnd, relay_stream
from .stream_tokens import GRANT_ROUTES, check_url_token
from .transcode import build_request, message_json
from .web_app import WEB_ROOT, WebApp
from .websocket import SessionEnd, SessionLimits, serve_session

if TYPE_CHECKING:
    from opentelemetry.trace import Span

__all__ = ["Gateway", "main"]

log = logging.getLogger("truc.gateway")

_JSON_TYPES: Final = ("application/json",)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
Metadata = tuple[tuple[str, str], ...]
_BUILTIN_ROUTES: Final = {"/openapi.json": "openapi", "/healthz": "healthz"}
_MAX_REQUEST_ID: Final = 128
"""Longest X-Request-Id kept (the rest is cut off)."""
MAX_HEAD_LINE: Final = 8190
MAX_HEADERS: Final = 64
"""A request's head: its request line (the URL, so the query string: at most a few
thousand parameters) and each header at most 8190 bytes, at most 64 headers;
beyond, aiohttp answers 400 before the gateway sees the request. A request's
body is bounded by ``TRUC_GATEWAY_MAX_BODY_BYTES``."""


class Exchange:
    """One request as the metrics and the log see it, filled in while it is served."""

    __slots__ = ("route", "start", "status")

    def __init__(self) -> None:
        self.route = UNKNOWN_ROUTE
        """The ``route`` label: the RPC's name once a route serves the request."""
        self.start = time.perf_counter()
        self.status = 499
        """The HTTP status; 499 (nginx's "client closed request") until an answer is
        made, and kept if the client goes away first, unless a stream had started (200)."""


class Gateway:
    """The route table, one gRPC channel per service, and the HTTP handling."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.routes = route_table()
        self.cors = CorsPolicy(settings.cors_origins)
        self.addresses = ClientAddresses(settings.trusted_proxies)
        self.stream_limit = Concurrency(
            per_key=settings.max_streams_per_address,
            total=0,
            what="streams (SSE and WebSocket) from this client address",
        )
        """SSE streams and WebSockets held open per client address on this replica."""
        self.stopping = asyncio.Event()
        self.open_streams = 0
        self._http = Children(HTTP_SECONDS)
        self._upstream = Children(UPSTREAM_SECONDS)
        self._openapi = served_document()
        self.web_app = WebApp(settings.web_dir or WEB_ROOT)
        addresses = {
            "truc.v1.GameService": settings.game_address,
            "truc.v1.LobbyService": settings.lobby_address,
        }
        # Round robin over every address a target resolves to (dns:/// of a headless
        # Service: each replica): truc_protocol.balancing.
        self._channels = {
            service: grpc.aio.insecure_channel(address, options=ROUND_ROBIN)
            for service, address in addresses.items()
        }
        self._unary: dict[str, grpc.aio.UnaryUnaryMultiCallable[Any, Any]] = {}
        self._streams: dict[str, grpc.aio.UnaryStreamMultiCallable[Any, Any]] = {}
        self._sessions: dict[str, grpc.aio.StreamStreamMultiCallable[Any, Any]] = {}
        self._session_limits = SessionLimits(
            max_frame_bytes=settings.max_body_bytes,
            open_timeout=settings.ws_open_timeout_ms / 1000,
            ping=settings.ws_ping_ms / 1000,
        )
        for route in self.routes:
            channel = self._channels[route.service]
            if route.websocket:
                self._sessions[route.grpc_path] = channel.stream_stream(
                    route.grpc_path,
                    request_serializer=route.request_class.SerializeToString,
                    response_deserializer=route.response_class.FromString,
                )
            elif route.streaming:
                self._streams[route.grpc_path] = channel.unary_stream(
                    route.grpc_path,
                    request_serializer=route.request_class.SerializeToString,
                    response_deserializer=route.response_class.FromString,
                )
            else:
                self._unary[route.grpc_path] = channel.unary_unary(
                    route.grpc_path,
                    request_serializer=route.request_class.SerializeToString,
                    response_deserializer=route.response_class.FromString,
                )

    def application(self) -> web.Application:
        # No aiohttp routes: the one middleware dispatches every request itself, so
        # that any path (even one aiohttp's router cannot match) gets a JSON answer.
        app = web.Application(
            client_max_size=self.settings.max_body_bytes, middlewares=[self._serve]
        )
        app.on_response_prepare.append(self._decorate)
        return app

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close(None)

    # ------------------------------------------------------------------ dispatch

    async def dispatch(self, request: web.Request, exchange: Exchange) -> web.StreamResponse:
        raw_path = request.rel_url.raw_path
        page = self.web_app.route_of(raw_path)
        if page is not None:
            exchange.route = page
            return await self.web_app.answer(request)
        builtin = self._builtin(raw_path)
        if builtin is not None:
            exchange.route = _BUILTIN_ROUTES[raw_path]
            return await self._builtin_answer(request, builtin)
        matched = most_specific(self.routes, raw_path)
        if not matched:
            meant = doubled_collection(self.routes, raw_path)
            if meant is not None:
                raise _doubled(raw_path, meant)
            raise GatewayError(
                404,
                grpc.StatusCode.NOT_FOUND,
                "ROUTE_NOT_FOUND",
                f"no route for {request.path}: see /openapi.json",
            )
        methods = sorted({route.http_method for route, _ in matched})
        if request.method == "OPTIONS":
            exchange.route = "preflight"
            return self._preflight(request, methods)
        found = next(((r, v) for r, v in matched if r.http_method == request.method), None)
        if found is None:
            raise _method_not_allowed(request.method, methods)
        route, variables = found
        exchange.route = route.method.name
        logs.bind(method=route.method.name)
        _bind_resource(variables)
        address = self.addresses.of(request)
        if route.websocket:
            return await self._session(request, route, variables, address)
        body = await self._body(request, route)
        metadata = self._metadata(request, route, variables, address)
        message = build_request(
            route, variables, request.query.items(), body, request.headers.get("Last-Event-ID")
        )
        if "X-Request-Id" not in request.headers:
            request_id = getattr(message, "request_id", None)
            if request_id:
                logs.bind(request_id=request_id)
        with self._holding(address) if route.streaming else contextlib.nullcontext():
            if tracing.tracer is None:
                return await self._forward(request, exchange, route, message, metadata, span=None)
            with tracing.call_span(route.service, route.method.name) as span:
                traced = (*metadata, *tracing.outgoing())
                return await self._forward(request, exchange, route, message, traced, span=span)

    async def _forward(
        self,
        request: web.Request,
        exchange: Exchange,
        route: Route,
        message: Message,
        metadata: Metadata,
        *,
        span: Span | None,
    ) -> web.StreamResponse:
        """Call the service; its answer, error or stream as HTTP."""
        start = time.perf_counter()
        code = grpc.StatusCode.CANCELLED  # unless the call ends before the client leaves
        try:
            if route.streaming:
                end = StreamEnd()
                try:
                    return await self._relay(request, route, message, metadata, end)
                finally:
                    code = end.code
                    if end.started:  # a client leaving ends a stream: still a 200
                        exchange.status = 200
            try:
                response = await self._unary[route.grpc_path](
                    message, metadata=metadata, timeout=self.settings.call_timeout_ms / 1000
                )
            except grpc.aio.AioRpcError as error:
                code = error.code()
                return error_response(rpc_error_status(error))
            code = grpc.StatusCode.OK
            return web.Response(text=message_json(response), content_type="application/json")
        finally:
            labels = (route.service, route.method.name, code.name)
            self._upstream.observe(labels, time.perf_counter() - start)
            if span is not None:
                tracing.end_rpc(span, code.name, code.value[0])

    async def _relay(
        self,
        request: web.Request,
        route: Route,
        message: Message,
        metadata: Metadata,
        end: StreamEnd,
    ) -> web.StreamResponse:
        call = self._streams[route.grpc_path](message, metadata=metadata)
        gauge = SSE_STREAMS.labels(route.method.name)
        self.open_streams += 1
        gauge.inc()
        try:
            return await relay_stream(
                request,
                route,
                call,
                heartbeat=self.settings.heartbeat_ms / 1000,
                stopping=self.stopping,
                end=end,
            )
        finally:
            self.open_streams -= 1
            gauge.dec()

    async def _session(
        self, request: web.Request, route: Route, variables: dict[str, str], address: str
    ) -> web.StreamResponse:
        """A WebSocket session: the upgrade, then the frames relayed both ways."""
        [name] = variables.values()  # the template's one variable: the game's name
        extra: Metadata = ((CLIENT_ADDRESS, address),)
        with self._holding(address):
            if tracing.tracer is None:
                return await self._relay_session(request, route, name, extra, span=None)
            with tracing.call_span(route.service, route.method.name) as span:
                traced = (*extra, *tracing.outgoing())
                return await self._relay_session(request, route, name, traced, span=span)

    @contextlib.contextmanager
    def _holding(self, address: str) -> Iterator[None]:
        """One of the client address's streams (SSE or WebSocket) while the block
        runs; 429 RATE_LIMITED if the address (an IPv6 one: its /64) holds its
        limit already."""
        key = counted_as(parse_address(address))
        try:
            self.stream_limit.acquire(key)
        except ServiceError as error:
            raise service_error(error) from None
        try:
            yield
        finally:
            self.stream_limit.release(key)

    async def _relay_session(
        self,
        request: web.Request,
        route: Route,
        name: str,
        traced: Metadata,
        *,
        span: Span | None,
    ) -> web.StreamResponse:
        multicallable = self._sessions[route.grpc_path]
        opened: list[float] = []  # when the gRPC stream was opened, if it was

        def open_call(metadata: Metadata) -> Any:
            opened.append(time.perf_counter())
            return multicallable(None, metadata=(*metadata, *traced))

        end = SessionEnd()
        self.open_streams += 1
        try:
            return await serve_session(
                request,
                route,
                name,
                open_call,
                limits=self._session_limits,
                cors=self.cors,
                stopping=self.stopping,
                end=end,
            )
        finally:
            self.open_streams -= 1
            if opened:  # not a refused upgrade, nor a socket closed before its open frame
                labels = (route.service, route.method.name, end.code.name)
                self._upstream.observe(labels, time.perf_counter() - opened[0])
            if span is not None:
                tracing.end_rpc(span, end.code.name, end.code.value[0])

    def _builtin(self, raw_path: str) -> Handler | None:
        return {"/openapi.json": self._openapi_json, "/healthz": self._health}.get(raw_path)

    async def _builtin_answer(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.method == "OPTIONS":
            return self._preflight(request, ["GET"])
        if request.method not in ("GET", "HEAD"):
            raise _method_not_allowed(request.method, ["GET"])
        return await handler(request)

    async def _openapi_json(self, _: web.Request) -> web.StreamResponse:
        return web.Response(text=self._openapi, content_type="application/json")

    async def _health(self, _: web.Request) -> web.StreamResponse:
        state = "NOT_SERVING" if self.stopping.is_set() else "SERVING"
        body = {"status": state, "openStreams": self.open_streams}
        return web.json_response(body, status=503 if self.stopping.is_set() else 200)

    def _preflight(self, request: web.Request, methods: list[str]) -> web.Response:
        origin = request.headers.get("Origin")
        if origin is not None and not self.cors.allows(origin):
            raise GatewayError(
                403,
                grpc.StatusCode.PERMISSION_DENIED,
                "ORIGIN_NOT_ALLOWED",
                f"origin {origin!r} is not allowed (TRUC_GATEWAY_CORS_ORIGINS)",
            )
        return self.cors.preflight(methods)

    async def _body(self, request: web.Request, route: Route) -> bytes:
        if not request.body_exists:
            return b""
        if request.content_length is not None and (
            request.content_length > self.settings.max_body_bytes
        ):
            raise _too_large(self.settings.max_body_bytes)
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            raise _too_large(self.settings.max_body_bytes) from None
        kind = request.headers.get("Content-Type")
        if (
            body.strip()
            and route.body
            and kind is not None
            and request.content_type not in (_JSON_TYPES)
        ):
            raise GatewayError(
                415,
                grpc.StatusCode.INVALID_ARGUMENT,
                "UNSUPPORTED_MEDIA_TYPE",
                f"the body must be application/json, not {request.content_type}",
            )
        return body

    def _metadata(
        self, request: web.Request, route: Route, variables: dict[str, str], address: str
    ) -> Metadata:
        """The call's metadata: the client's address, and the caller's token from the
        ``Authorization`` header or (streaming routes) a stream token in the URL (on
        a game's watch route, that game's spectator grant too)."""
        client: Metadata = ((CLIENT_ADDRESS, address),)
        authorization = request.headers.get("Authorization")
        tokens = request.query.getall("access_token", ())
        if tokens and not route.streaming:
            raise GatewayError(
                400,
                grpc.StatusCode.INVALID_ARGUMENT,
                "BAD_REQUEST",
                "access_token is accepted by the streaming (:watch) routes only, for "
                "EventSource; send the Authorization header",
            )
        if len(tokens) > 1:
            raise GatewayError(
                400, grpc.StatusCode.INVALID_ARGUMENT, "BAD_REQUEST", "access_token is given twice"
            )
        grant_for = variables.get("name") if route.method.full_name in GRANT_ROUTES else None
        for token in tokens:  # checked even beside a header: it is in the URL all the same
            check_url_token(token, game=grant_for)
            if authorization is None:
                authorization = "Bearer " + token
        if authorization is None:
            return client
        if not (authorization.isascii() and authorization.isprintable()):
            raise GatewayError(
                401,
                grpc.StatusCode.UNAUTHENTICATED,
                "TOKEN_INVALID",
                "the Authorization header must be printable ASCII",
            )
        return (*client, ("authorization", authorization))

    # ------------------------------------------------------------------ hooks

    @web.middleware
    async def _serve(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        del handler  # aiohttp's router is not used: see application()
        exchange = Exchange()
        # Requests of one keep-alive connection share a task: set every field afresh.
        request_id = request.headers.get("X-Request-Id")
        logs.bind(
            request_id=request_id[:_MAX_REQUEST_ID] if request_id else None,
            method=None,
            game=None,
            ticket=None,
        )
        try:
            if tracing.tracer is None:
                response = await self._answer(request, exchange)
            else:
                response = await self._traced(request, exchange)
            exchange.status = response.status
            return response
        finally:
            self._done(request, exchange)

    async def _traced(self, request: web.Request, exchange: Exchange) -> web.StreamResponse:
        with tracing.http_span(request.method, request.headers) as span:
            try:
                response = await self._answer(request, exchange)
                exchange.status = response.status
                return response
            finally:
                tracing.end_http(span, request.method, exchange.route, exchange.status)

    def _done(self, request: web.Request, exchange: Exchange) -> None:
        status = exchange.status
        seconds = time.perf_counter() - exchange.start
        method = method_label(request.method)
        self._http.observe((exchange.route, method, str(status)), seconds)
        if status >= 500 or log.isEnabledFor(logging.DEBUG):
            fields = {
                "route": exchange.route,
                "http_method": method,
                "path": request.path,  # never the query string: it may hold access_token
                "status": status,
                "ms": round(seconds * 1000, 3),
            }
            if status >= 500:
                log.warning("request failed", extra=fields)
            else:
                log.debug("request", extra=fields)

    async def _answer(self, request: web.Request, exchange: Exchange) -> web.StreamResponse:
        try:
            return await self.dispatch(request, exchange)
        except GatewayError as error:
            return error.response()
        except (asyncio.CancelledError, ConnectionError):
            raise
        except Exception:
            log.exception("%s %s: internal error", request.method, request.path)
            return GatewayError(
                500, grpc.StatusCode.INTERNAL, "INTERNAL", "internal error"
            ).response()

    async def _decorate(self, request: web.Request, response: web.StreamResponse) -> None:
        self.cors.decorate(request, response)


def _bind_resource(variables: dict[str, str]) -> None:
    """Bind the game or ticket a route's ``name`` names to the log context."""
    kind, _, ident = variables.get("name", "").partition("/")
    if kind == "games":
        logs.bind(game=ident)
    elif kind == "tickets":
        logs.bind(ticket=ident)


def _method_not_allowed(method: str, methods: list[str]) -> GatewayError:
    return GatewayError(
        405,
        grpc.StatusCode.UNIMPLEMENTED,
        "METHOD_NOT_ALLOWED",
        f"{method} is not allowed here; allowed: {', '.join(methods)}",
        headers={"Allow": ", ".join((*methods, "OPTIONS"))},
    )


def _doubled(raw_path: str, meant: str) -> GatewayError:
    collection = meant.split("/")[2]
    return GatewayError(
        404,
        grpc.StatusCode.NOT_FOUND,
        "BAD_PATH",
        f"no route for {raw_path}: the path takes the resource's name once, as "
        f'/v1/{{name}} with name "{collection}/..." (as the API returns it): {meant}',
        metadata={"path": meant},
    )


def _too_large(limit: int) -> GatewayError:
    return GatewayError(
        413,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "BODY_TOO_LARGE",
        f"the body is larger than {limit} bytes",
    )


class GatewayProcess:
    """The gateway as the kit runs it: the HTTP site, ``/metrics``, the channels."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.gateway = Gateway(settings)
        self._runner = web.AppRunner(
            self.gateway.application(),
            handler_cancellation=True,
            access_log=None,
            keepalive_timeout=settings.idle_seconds,
            max_line_size=MAX_HEAD_LINE,
            max_field_size=MAX_HEAD_LINE,
            max_headers=MAX_HEADERS,
        )
        self._stop_metrics: Callable[[], None] | None = None

    async def start(self) -> None:
        settings = self.settings
        await self._runner.setup()
        site = web.TCPSite(
            self._runner, settings.host, settings.port, shutdown_timeout=settings.grace_seconds
        )
        if settings.metrics_port != 0:  # logged before "listening": tests read it so
            self._stop_metrics = telemetry.serve(settings.host, settings.metrics_port, log)
        await site.start()
        port = next(a[1] for a in self._runner.addresses if isinstance(a, tuple))
        log.info(
            "gateway listening on %s:%d (game service at %s, lobby at %s)",
            settings.host,
            port,
            settings.game_address,
            settings.lobby_address,
        )

    async def stop(self) -> None:
        """SSE streams end, in-flight requests get the grace, the channels close."""
        log.info("gateway stopping")
        self.gateway.stopping.set()
        await self._runner.cleanup()
        await self.gateway.close()
        if self._stop_metrics is not None:
            self._stop_metrics()


class _ClientMistakes(logging.Filter):
    """aiohttp answers malformed HTTP itself (400) but logs a traceback for it: a
    client's mistake, not the gateway's, so it is logged at DEBUG in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, HttpProcessingError):
            # Its kind only: aiohttp's message may quote the request's bytes (a token).
            log.debug("malformed HTTP request (%s)", type(error).__name__)
            return False
        return True


async def _build(settings: Settings) -> GatewayProcess:
    return GatewayProcess(settings)


def _quiet_client_mistakes(_: Settings) -> None:
    logging.getLogger("aiohttp.server").addFilter(_ClientMistakes())


def main() -> int:
    """``truc-gateway``: serve the gateway, configured from the environment."""
    return run_service("truc-gateway", Settings, _build, log, setup=_quiet_client_mistakes)


if __name__ == "__main__":
    sys.exit(main())
