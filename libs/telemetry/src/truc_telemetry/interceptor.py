"""The gRPC server interceptor of both services: metrics, log context, tracing.

For every RPC it binds the method to the log context (:mod:`.logs`), times the
call into ``truc_rpc_duration_seconds{service,method,code}``, counts open
server streams in ``truc_watch_streams``, logs one ``rpc`` line at DEBUG (with
the code and milliseconds), and, while tracing is on, makes the call a SERVER
span. The status code is the one the servicer aborted with (``OK`` when it
returned, ``CANCELLED`` when the client went away, ``UNKNOWN`` for an
exception that escaped).

Wrapped handlers are built once per method and reused, so the per-call cost is
a timer, a histogram observation and a context variable.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

import grpc

from . import logs, tracing
from .metrics import RPC_SECONDS, WATCH_STREAMS

__all__ = ["RpcInterceptor"]

if TYPE_CHECKING:  # the stubs' generics, not subscriptable at run time
    _Handler = grpc.RpcMethodHandler[Any, Any]
    _Context = grpc.aio.ServicerContext[Any, Any]
    _Unary = Callable[[Any, _Context], Awaitable[Any]]
    _Stream = Callable[[Any, _Context], AsyncIterator[Any]]
    _Interceptor = grpc.aio.ServerInterceptor[Any, Any]
else:
    _Interceptor = grpc.aio.ServerInterceptor
_CODES = {code.value[0]: code.name for code in grpc.StatusCode}


def _code_of(context: _Context, error: BaseException | None) -> tuple[str, int]:
    """(name, number) of the status the call ends with."""
    if isinstance(error, asyncio.CancelledError):
        return "CANCELLED", grpc.StatusCode.CANCELLED.value[0]
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code.name, code.value[0]
    if isinstance(code, int) and code in _CODES:
        return _CODES[code], code
    if error is not None:
        return "UNKNOWN", grpc.StatusCode.UNKNOWN.value[0]
    return "OK", 0


class _Rpc:
    """What the wrapper of one method needs: its names and histogram children."""

    __slots__ = ("_children", "method", "service")

    def __init__(self, full_method: str) -> None:
        service, _, method = full_method.lstrip("/").rpartition("/")
        self.service = service
        self.method = method
        self._children: dict[str, Any] = {}

    def observe(self, code: str, seconds: float) -> None:
        child = self._children.get(code)
        if child is None:
            child = self._children[code] = RPC_SECONDS.labels(self.service, self.method, code)
        child.observe(seconds)


class RpcInterceptor(_Interceptor):
    def __init__(self, log: logging.Logger) -> None:
        self._log = log
        self._wrapped: dict[str, tuple[_Handler, _Handler]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[_Handler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> _Handler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        method: str = handler_call_details.method
        cached = self._wrapped.get(method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        wrapped = self._wrap(_Rpc(method), handler)
        self._wrapped[method] = (handler, wrapped)
        return wrapped

    def _wrap(self, rpc: _Rpc, handler: _Handler) -> _Handler:
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._unary(rpc, cast("_Unary", handler.unary_unary)),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._stream(rpc, cast("_Stream", handler.unary_stream)),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler  # no client-streaming RPCs here: served as they are

    def _done(
        self, rpc: _Rpc, context: _Context, error: BaseException | None, start: float
    ) -> None:
        seconds = time.perf_counter() - start
        code, _ = _code_of(context, error)
        rpc.observe(code, seconds)
        if self._log.isEnabledFor(logging.DEBUG):
            self._log.debug("rpc", extra={"code": code, "ms": round(seconds * 1000, 3)})

    def _unary(self, rpc: _Rpc, behavior: _Unary) -> _Unary:
        async def plain(request: Any, context: _Context) -> Any:
            logs.bind(method=rpc.method)
            start = time.perf_counter()
            error: BaseException | None = None
            try:
                return await behavior(request, context)
            except BaseException as exc:
                error = exc
                raise
            finally:
                self._done(rpc, context, error, start)

        if tracing.tracer is None:
            return plain

        async def traced(request: Any, context: _Context) -> Any:
            with tracing.rpc_span(rpc.service, rpc.method, context.invocation_metadata()) as span:
                try:
                    return await plain(request, context)
                finally:
                    tracing.end_rpc(span, *_code_of(context, None))

        return traced

    def _stream(self, rpc: _Rpc, behavior: _Stream) -> _Stream:
        streams = WATCH_STREAMS.labels(rpc.service, rpc.method)

        async def stream(request: Any, context: _Context) -> AsyncIterator[Any]:
            logs.bind(method=rpc.method)
            start = time.perf_counter()
            error: BaseException | None = None
            streams.inc()
            span = (
                tracing.rpc_span(rpc.service, rpc.method, context.invocation_metadata())
                if tracing.tracer is not None
                else None
            )
            opened = span.__enter__() if span is not None else None
            try:
                async for response in behavior(request, context):
                    yield response
            except BaseException as exc:
                error = exc
                raise
            finally:
                streams.dec()
                self._done(rpc, context, error, start)
                if span is not None and opened is not None:
                    tracing.end_rpc(opened, *_code_of(context, error))
                    span.__exit__(None, None, None)

        return stream
