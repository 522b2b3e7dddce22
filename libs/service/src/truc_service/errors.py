"""The one table from exceptions to gRPC statuses with a ``google.rpc.ErrorInfo``.

Servicers never build a status by hand: they raise (or let through) a
:class:`~truc_protocol.errors.ServiceError` and :func:`to_status` turns it, or
any other exception, into the status sent to the client. The status carries a
``google.rpc.Status`` with an ``ErrorInfo`` (domain ``truc.v1``; ``reason`` is
machine-readable; its metadata is copied into the trailing metadata too) in the
``grpc-status-details-bin`` trailer; a refusal with ``retry_after_ms`` metadata
(RATE_LIMITED) also carries a ``google.rpc.RetryInfo`` with that delay, the
standard detail gRPC clients' retry helpers read. Anything that is not a ``ServiceError`` is
a bug: it is logged with its traceback and answered ``INTERNAL``.
"""

from __future__ import annotations

import logging
from typing import Final

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

from truc_protocol.errors import DOMAIN, RETRY_AFTER_MS, Code, ServiceError
from truc_protocol.status import STATUS_DETAILS

__all__ = ["GRPC_CODES", "Status", "rich_status", "to_status"]

log = logging.getLogger("truc.api")

GRPC_CODES: Final = {code: grpc.StatusCode[code.value] for code in Code}
"""Each protocol status code as the gRPC code it is sent as."""


class Status:
    """What to abort a call with."""

    __slots__ = ("code", "message", "trailers")

    def __init__(
        self, code: grpc.StatusCode, message: str, trailers: tuple[tuple[str, str | bytes], ...]
    ) -> None:
        self.code = code
        self.message = message
        self.trailers = trailers


def rich_status(
    code: grpc.StatusCode, reason: str, message: str, metadata: dict[str, str]
) -> status_pb2.Status:
    """The ``google.rpc.Status`` of an error: its code, message and ``ErrorInfo``."""
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN, metadata=metadata)
    detail = any_pb2.Any()
    detail.Pack(info)
    details = [detail]
    wait = metadata.get(RETRY_AFTER_MS, "")
    if wait.isdigit():
        retry = error_details_pb2.RetryInfo()
        retry.retry_delay.FromMilliseconds(int(wait))
        delay = any_pb2.Any()
        delay.Pack(retry)
        details.append(delay)
    return status_pb2.Status(code=code.value[0], message=message, details=details)


def _status(code: Code, reason: str, message: str, metadata: dict[str, str]) -> Status:
    grpc_code = GRPC_CODES[code]
    rich = rich_status(grpc_code, reason, message, metadata)
    trailers: tuple[tuple[str, str | bytes], ...] = (
        (STATUS_DETAILS, rich.SerializeToString()),
        *((key, value) for key, value in metadata.items()),
    )
    return Status(grpc_code, message, trailers)


def to_status(error: BaseException, *, method: str) -> Status:
    """The status for an exception raised while serving ``method``."""
    if isinstance(error, ServiceError):
        if error.code is Code.UNAVAILABLE:
            cause = f" ({error.__cause__})" if error.__cause__ is not None else ""
            log.warning("%s: %s%s", method, error, cause)
        return _status(error.code, error.reason, error.message, error.metadata)
    log.exception("%s: internal error", method, exc_info=error)
    return _status(Code.INTERNAL, "INTERNAL", "internal error", {})
