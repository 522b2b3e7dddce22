"""Errors of the game service, each with its gRPC status and machine-readable reason.

Exception tree (the API layer maps each to ``google.rpc.Status`` with an
``ErrorInfo`` whose ``reason`` is the ``reason`` attribute)::

    ServiceError
    ├── Unauthenticated      UNAUTHENTICATED     TOKEN_MISSING, TOKEN_INVALID, TOKEN_EXPIRED
    ├── PermissionDenied     PERMISSION_DENIED   NOT_SEATED, LOBBY_ONLY
    ├── InvalidArgument      INVALID_ARGUMENT    BAD_NAME, BAD_ACTION, BAD_REQUEST,
    │                                            FIXED_DEALS_DISABLED
    ├── NotFound             NOT_FOUND           GAME_NOT_FOUND
    ├── AlreadyExists        ALREADY_EXISTS      GAME_EXISTS
    ├── FailedPrecondition   FAILED_PRECONDITION the rules' Reason (NOT_YOUR_TURN, ...)
    ├── Aborted              ABORTED             STALE_ETAG, CONFLICT
    ├── ResourceExhausted    RESOURCE_EXHAUSTED  RATE_LIMITED
    └── Unavailable          UNAVAILABLE         STORE_UNAVAILABLE
"""

from __future__ import annotations

from typing import ClassVar

import grpc

__all__ = [
    "Aborted",
    "AlreadyExists",
    "FailedPrecondition",
    "InvalidArgument",
    "NotFound",
    "PermissionDenied",
    "ResourceExhausted",
    "ServiceError",
    "Unauthenticated",
    "Unavailable",
]


class ServiceError(Exception):
    """An error answered to the client: a status code, a reason, a message."""

    code: ClassVar[grpc.StatusCode] = grpc.StatusCode.INTERNAL

    def __init__(
        self, reason: str, message: str, *, metadata: dict[str, str] | None = None
    ) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message
        self.metadata = metadata or {}


class Unauthenticated(ServiceError):
    code = grpc.StatusCode.UNAUTHENTICATED


class PermissionDenied(ServiceError):
    code = grpc.StatusCode.PERMISSION_DENIED


class InvalidArgument(ServiceError):
    code = grpc.StatusCode.INVALID_ARGUMENT


class NotFound(ServiceError):
    code = grpc.StatusCode.NOT_FOUND


class AlreadyExists(ServiceError):
    code = grpc.StatusCode.ALREADY_EXISTS


class FailedPrecondition(ServiceError):
    code = grpc.StatusCode.FAILED_PRECONDITION


class Aborted(ServiceError):
    code = grpc.StatusCode.ABORTED


class ResourceExhausted(ServiceError):
    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class Unavailable(ServiceError):
    code = grpc.StatusCode.UNAVAILABLE
