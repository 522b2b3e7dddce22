"""Errors as HTTP: the gRPC status code picks the HTTP status (the standard
google.rpc mapping, ``google/rpc/code.proto``) and the body is the call's
``google.rpc.Status`` as JSON, decoded from ``grpc-status-details-bin``, so the
``ErrorInfo`` (domain ``truc.v1``) and its reason reach HTTP clients unchanged::

    {"code": 16, "message": "...", "details": [{"@type":
     "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TOKEN_INVALID",
     "domain": "truc.v1", "metadata": {}}]}

The gateway's own refusals (:class:`GatewayError`) have the same shape. A
TOKEN_MISSING refusal's message is worded for HTTP (:func:`http_worded`: the
``Authorization`` header, not gRPC metadata), its reason unchanged. Every
429 (RESOURCE_EXHAUSTED) carries ``Retry-After``, in whole seconds rounded up:
the ErrorInfo's ``retry_after_ms``, else the status's ``google.rpc.RetryInfo``,
else 1.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Final, cast

import grpc
from aiohttp import web
from google.protobuf import json_format
from google.rpc import error_details_pb2, status_pb2

from truc_protocol.errors import DOMAIN, RETRY_AFTER_MS, ServiceError
from truc_protocol.status import STATUS_DETAILS
from truc_service.errors import GRPC_CODES, rich_status

__all__ = [
    "DOMAIN",
    "HTTP_STATUS",
    "HTTP_TOKEN_MISSING",
    "TOKEN_MISSING",
    "GatewayError",
    "bad_request",
    "error_response",
    "http_status_of",
    "http_worded",
    "retry_after_seconds",
    "rpc_error_status",
    "service_error",
    "status_json",
    "status_reason",
]

HTTP_STATUS: Final[dict[grpc.StatusCode, int]] = {
    grpc.StatusCode.OK: 200,
    grpc.StatusCode.CANCELLED: 499,
    grpc.StatusCode.UNKNOWN: 500,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.FAILED_PRECONDITION: 400,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.INTERNAL: 500,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DATA_LOSS: 500,
}
"""gRPC code -> HTTP status, as google/rpc/code.proto documents it."""
TOKEN_MISSING: Final = "TOKEN_MISSING"
HTTP_TOKEN_MISSING: Final = (
    "send the header 'Authorization: Bearer <token>' (a token from POST /v1/guests:signIn)"
)
"""TOKEN_MISSING's message over HTTP (the services say it for HTTP and gRPC alike)."""


class GatewayError(Exception):
    """A request the gateway refuses before any service sees it."""

    def __init__(
        self,
        http_status: int,
        code: grpc.StatusCode,
        reason: str,
        message: str,
        *,
        headers: dict[str, str] | None = None,
        metadata: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.http_status = http_status
        self.status = rich_status(code, reason, message, metadata or {})
        self.headers = headers or {}

    def response(self) -> web.Response:
        return error_response(self.status, http_status=self.http_status, headers=self.headers)


def bad_request(message: str) -> GatewayError:
    """400 INVALID_ARGUMENT, reason BAD_REQUEST: the services' reason for a malformed request."""
    return GatewayError(400, grpc.StatusCode.INVALID_ARGUMENT, "BAD_REQUEST", message)


def service_error(error: ServiceError) -> GatewayError:
    """A refusal the gateway makes with the protocol's errors (its own limits)."""
    code = GRPC_CODES[error.code]
    return GatewayError(
        HTTP_STATUS[code], code, error.reason, error.message, metadata=error.metadata
    )


def rpc_error_status(error: grpc.aio.AioRpcError) -> status_pb2.Status:
    """The google.rpc.Status a failed call carries (or one from its code and details)."""
    trailing = cast(Iterable[tuple[str, str | bytes]], error.trailing_metadata() or ())
    for key, value in trailing:
        if key == STATUS_DETAILS and isinstance(value, bytes):
            try:
                return status_pb2.Status.FromString(value)
            except Exception:
                break
    return status_pb2.Status(code=error.code().value[0], message=error.details() or "")


def status_reason(status: status_pb2.Status) -> str:
    """The ErrorInfo reason of a Status, or its code's name."""
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info) and info.reason:
            return str(info.reason)
    return next((c.name for c in grpc.StatusCode if c.value[0] == status.code), "UNKNOWN")


def http_worded(status: status_pb2.Status, missing: str = HTTP_TOKEN_MISSING) -> status_pb2.Status:
    """``status``, with the message ``missing`` if it is a TOKEN_MISSING refusal:
    how an HTTP (or WebSocket) client sends its token."""
    if status_reason(status) != TOKEN_MISSING:
        return status
    worded = status_pb2.Status()
    worded.CopyFrom(status)
    worded.message = missing
    return worded


def http_status_of(status: status_pb2.Status) -> int:
    return _BY_NUMBER.get(status.code, 500)


_BY_NUMBER: Final = {code.value[0]: http for code, http in HTTP_STATUS.items()}


def retry_after_seconds(status: status_pb2.Status) -> int | None:
    """The ``Retry-After`` of a status: its ErrorInfo's ``retry_after_ms``
    (RATE_LIMITED), else its ``google.rpc.RetryInfo``, in seconds rounded up."""
    delays: list[float] = []
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        retry = error_details_pb2.RetryInfo()
        if detail.Unpack(info):
            wait = info.metadata.get(RETRY_AFTER_MS, "")
            if wait.isascii() and wait.isdigit():
                return max(1, math.ceil(int(wait) / 1000))
        elif detail.Unpack(retry):
            delays.append(retry.retry_delay.ToMilliseconds() / 1000)
    return max(1, math.ceil(delays[0])) if delays else None


def status_json(status: status_pb2.Status) -> str:
    """The proto3 JSON of a google.rpc.Status (details with their ``@type``)."""
    try:
        body = json_format.MessageToDict(status, always_print_fields_with_no_presence=True)
    except Exception:
        body = {"code": status.code, "message": status.message, "details": []}
    return json.dumps(body, separators=(",", ":"))


def error_response(
    status: status_pb2.Status,
    *,
    http_status: int | None = None,
    headers: dict[str, str] | None = None,
) -> web.Response:
    """The HTTP answer for a google.rpc.Status: its HTTP status (unless given), a
    ``Retry-After`` (:func:`retry_after_seconds`; 1 for a 429 without one), the
    Status as JSON (:func:`http_worded`)."""
    extra = dict(headers or {})
    http = http_status or http_status_of(status)
    retry = retry_after_seconds(status)
    if retry is None and http == 429:
        retry = 1  # every 429 says when to come back
    if retry is not None:
        extra["Retry-After"] = str(retry)
    return web.Response(
        status=http,
        headers=extra,
        text=status_json(http_worded(status)),
        content_type="application/json",
    )
