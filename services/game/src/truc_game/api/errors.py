"""One table from exceptions to gRPC statuses with a ``google.rpc.ErrorInfo``.

Servicers never build a status by hand: they raise (or let through) a
:class:`~truc_game.errors.ServiceError` and :func:`to_status` turns it, or any
other exception, into the status sent to the client. The status carries a
``google.rpc.Status`` with an ``ErrorInfo`` (domain ``truc.v1``; ``reason`` is
machine-readable) in the ``grpc-status-details-bin`` trailer.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Final, cast

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from redis.exceptions import RedisError

from truc_game.errors import ServiceError, Unavailable

__all__ = ["DOMAIN", "Status", "reason_of", "to_status"]

DOMAIN: Final = "truc.v1"
log = logging.getLogger("truc.game.api")


class Status:
    """What to abort a call with."""

    __slots__ = ("code", "message", "trailers")

    def __init__(
        self, code: grpc.StatusCode, message: str, trailers: tuple[tuple[str, str | bytes], ...]
    ) -> None:
        self.code = code
        self.message = message
        self.trailers = trailers


def _status(code: grpc.StatusCode, reason: str, message: str, metadata: dict[str, str]) -> Status:
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN, metadata=metadata)
    detail = any_pb2.Any()
    detail.Pack(info)
    rich = status_pb2.Status(code=code.value[0], message=message, details=[detail])
    trailers: tuple[tuple[str, str | bytes], ...] = (
        ("grpc-status-details-bin", rich.SerializeToString()),
        *((key, value) for key, value in metadata.items()),
    )
    return Status(code, message, trailers)


def to_status(error: BaseException, *, method: str) -> Status:
    """The status for an exception raised while serving ``method``."""
    if isinstance(error, ServiceError):
        return _status(error.code, error.reason, error.message, error.metadata)
    if isinstance(error, RedisError):
        log.warning("%s: store unavailable: %s", method, error)
        unavailable = Unavailable("STORE_UNAVAILABLE", "the game store cannot be reached; retry")
        return _status(unavailable.code, unavailable.reason, unavailable.message, {})
    log.exception("%s: internal error", method, exc_info=error)
    return _status(grpc.StatusCode.INTERNAL, "INTERNAL", "internal error", {})


def reason_of(error: grpc.RpcError) -> str | None:
    """The ``ErrorInfo.reason`` a failed call (sync or asyncio) carries: the client
    side of this table."""
    trailing = cast(Iterable[tuple[str, str | bytes]], error.trailing_metadata() or ())
    for key, value in trailing:
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return str(info.reason)
    return None
