"""Reading a failed call: the client side of the error table.

A truc service sends every error as a ``google.rpc.Status`` holding a
``google.rpc.ErrorInfo`` (domain ``truc.v1``) in the ``grpc-status-details-bin``
trailer (:func:`truc_service.errors.to_status` writes it); :func:`reason_of`
reads its machine-readable reason back, and :class:`TrucError` is a failed call
as clients and bots see it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, cast

import grpc
from google.protobuf.message import DecodeError
from google.rpc import error_details_pb2, status_pb2

from .errors import RETRY_AFTER_MS

__all__ = [
    "STATUS_DETAILS",
    "TrucError",
    "rate_limit_wait",
    "reason_of",
    "retry_after_ms",
    "trailers",
]

STATUS_DETAILS: Final = "grpc-status-details-bin"
"""The trailer that carries the ``google.rpc.Status``."""


def trailers(error: grpc.RpcError) -> Iterable[tuple[str, str | bytes]]:
    """A failed call's trailing metadata as (key, value) pairs (none if it has none)."""
    trailing = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
    return cast("Iterable[tuple[str, str | bytes]]", trailing or ())


def reason_of(error: grpc.RpcError) -> str:
    """The ``ErrorInfo.reason`` a failed call (sync or asyncio) carries ("" if none)."""
    for key, value in trailers(error):
        if key != STATUS_DETAILS or not isinstance(value, bytes):
            continue
        status = status_pb2.Status()
        try:
            status.ParseFromString(value)
        except DecodeError:  # a malformed trailer: no reason
            return ""
        for detail in status.details:
            info = error_details_pb2.ErrorInfo()
            if detail.Is(info.DESCRIPTOR) and detail.Unpack(info):
                return str(info.reason)
    return ""


class TrucError(Exception):
    """A failed call: its gRPC ``code``, ErrorInfo ``reason`` ("" if none) and ``message``."""

    def __init__(self, code: grpc.StatusCode, reason: str, message: str) -> None:
        super().__init__(f"{code.name} {reason or '-'}: {message}")
        self.code = code
        self.reason = reason
        self.message = message

    @staticmethod
    def reason_of(error: grpc.RpcError) -> str:
        """The ErrorInfo reason in a failed call's ``grpc-status-details-bin`` ("" if none)."""
        return reason_of(error)

    @classmethod
    def from_rpc(cls, error: grpc.aio.AioRpcError) -> TrucError:
        """The :class:`TrucError` of a failed ``grpc.aio`` call."""
        return cls(error.code(), cls.reason_of(error), error.details() or "")


def retry_after_ms(error: grpc.RpcError) -> int | None:
    """The wait a RESOURCE_EXHAUSTED (RATE_LIMITED) answer asks for, if it says:
    its ``google.rpc.RetryInfo``, else its ``retry_after_ms`` trailer."""
    found: int | None = None
    for key, value in trailers(error):
        if key == RETRY_AFTER_MS and isinstance(value, str) and value.isdigit():
            found = int(value)
        elif key == STATUS_DETAILS and isinstance(value, bytes):
            status = status_pb2.Status()
            try:
                status.ParseFromString(value)
            except DecodeError:
                continue
            for detail in status.details:
                retry = error_details_pb2.RetryInfo()
                if detail.Is(retry.DESCRIPTOR) and detail.Unpack(retry):
                    return int(retry.retry_delay.ToMilliseconds())
    return found


def rate_limit_wait(error: grpc.RpcError, max_backoff: float) -> float:
    """Seconds to wait before resending after RATE_LIMITED: what the answer asks
    (at most ``5 * max_backoff``), else ``max_backoff``."""
    wait = retry_after_ms(error)
    return max_backoff if wait is None else min(max_backoff * 5, wait / 1000)
