"""Errors of the lobby: a gRPC status code, a machine-readable reason, a message.

Reasons (the ``ErrorInfo.reason``, domain ``truc.v1``) are listed in
``proto/truc/v1/lobby_service.proto``. :func:`to_status` is the one table from
exceptions to statuses; servicers never build a status by hand.
"""

from __future__ import annotations

import logging
from typing import Final

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from redis.exceptions import RedisError

__all__ = ["LobbyError", "Unauthenticated", "to_status"]

DOMAIN: Final = "truc.v1"
log = logging.getLogger("truc.lobby.api")


class LobbyError(Exception):
    def __init__(self, code: grpc.StatusCode, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message


class Unauthenticated(LobbyError):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(grpc.StatusCode.UNAUTHENTICATED, reason, message)


def to_status(
    error: BaseException, *, method: str
) -> tuple[grpc.StatusCode, str, tuple[tuple[str, str | bytes], ...]]:
    """(code, message, trailing metadata with a google.rpc.Status) for ``error``."""
    if isinstance(error, LobbyError):
        code, reason, message = error.code, error.reason, error.message
    elif isinstance(error, RedisError):
        log.warning("%s: store unavailable: %s", method, error)
        code, reason = grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE"
        message = "the lobby store cannot be reached; retry"
    else:
        log.exception("%s: internal error", method, exc_info=error)
        code, reason, message = grpc.StatusCode.INTERNAL, "INTERNAL", "internal error"
    detail = any_pb2.Any()
    detail.Pack(error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN))
    rich = status_pb2.Status(code=code.value[0], message=message, details=[detail])
    return code, message, (("grpc-status-details-bin", rich.SerializeToString()),)
