"""The RPC guard: what every servicer method of every truc service does the same way.

* :func:`lenient` request deserializers answer ``None`` instead of raising on
  bytes that are not the request message, so the method refuses them with
  ``INVALID_ARGUMENT`` (``BAD_REQUEST``) and an ``ErrorInfo`` (:func:`require`)
  rather than grpc answering ``UNKNOWN`` and logging a traceback;
* :func:`bearer` reads the ``authorization`` metadata of a call;
* :func:`guarded` wraps a unary method and :func:`guarded_stream` a
  server-streaming one: any exception becomes the status of
  :func:`truc_service.errors.to_status`, sent with its trailers.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

import grpc
from google.protobuf.message import DecodeError

from truc_protocol.errors import InvalidArgument

from .errors import to_status

__all__ = ["Context", "bearer", "guarded", "guarded_stream", "lenient", "require"]

Context = grpc.aio.ServicerContext[Any, Any]
_Request = TypeVar("_Request")
_Reply = TypeVar("_Reply")
_Self = TypeVar("_Self")
_P = ParamSpec("_P")


def lenient(parse: Callable[[bytes], _Request]) -> Callable[[bytes], _Request | None]:
    """A request deserializer that answers None instead of raising on bad bytes."""

    def deserialize(data: bytes) -> _Request | None:
        try:
            return parse(data)
        except DecodeError:
            return None

    return deserialize


def require(request: _Request | None, kind: str) -> _Request:
    """The request, or INVALID_ARGUMENT ``BAD_REQUEST`` if its bytes did not parse."""
    if request is None:
        raise InvalidArgument("BAD_REQUEST", f"the request is not a valid truc.v1.{kind}")
    return request


def bearer(context: Context) -> str | None:
    """The call's ``authorization`` metadata value (``Bearer <token>``), if any."""
    for key, value in context.invocation_metadata() or ():
        if key == "authorization":
            return value if isinstance(value, str) else None
    return None


async def abort(context: Context, error: BaseException, method: str) -> None:
    """End the call with the status of ``error`` (raises, as ``context.abort`` does)."""
    status = to_status(error, method=method)
    await context.abort(status.code, status.message, status.trailers)


def guarded(
    method: Callable[Concatenate[_Self, _Request, Context, _P], Awaitable[_Reply]],
) -> Callable[Concatenate[_Self, _Request, Context, _P], Awaitable[_Reply]]:
    """A unary servicer method whose every failure is answered by the error table."""
    name = method.__name__

    @functools.wraps(method)
    async def call(
        self: _Self, request: _Request, context: Context, *args: _P.args, **kwargs: _P.kwargs
    ) -> _Reply:
        try:
            return await method(self, request, context, *args, **kwargs)
        except Exception as exc:
            await abort(context, exc, name)
            raise

    return cast("Callable[Concatenate[_Self, _Request, Context, _P], Awaitable[_Reply]]", call)


def guarded_stream(
    method: Callable[Concatenate[_Self, _Request, Context, _P], AsyncIterator[_Reply]],
) -> Callable[Concatenate[_Self, _Request, Context, _P], AsyncIterator[_Reply]]:
    """A server-streaming servicer method whose every failure is answered by the
    error table."""
    name = method.__name__

    @functools.wraps(method)
    async def call(
        self: _Self, request: _Request, context: Context, *args: _P.args, **kwargs: _P.kwargs
    ) -> AsyncIterator[_Reply]:
        try:
            async for reply in method(self, request, context, *args, **kwargs):
                yield reply
        except Exception as exc:
            await abort(context, exc, name)
            raise

    return cast("Callable[Concatenate[_Self, _Request, Context, _P], AsyncIterator[_Reply]]", call)
