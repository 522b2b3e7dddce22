"""The errors of the ``truc.v1`` protocol, transport-neutral.

Every refusal a truc service answers is a :class:`ServiceError`: a status code
(the gRPC codes' names; the REST gateway maps each to its HTTP status), a
machine-readable ``reason`` (sent as ``google.rpc.ErrorInfo.reason``, domain
:data:`DOMAIN`), a message for people, and optional metadata (sent both in the
``ErrorInfo`` and as trailing metadata, e.g. ``retry_after_ms``). The reasons
of each RPC are listed in its proto comment.

Use cases raise these; they import no transport. The one table from them to
gRPC statuses is :func:`truc_service.errors.to_status`; the client side of it
is :func:`truc_protocol.status.reason_of`::

    ServiceError
    ├── Unauthenticated      TOKEN_MISSING, TOKEN_INVALID, TOKEN_EXPIRED
    ├── PermissionDenied     NOT_SEATED, LOBBY_ONLY, NOT_YOUR_TICKET, ...
    ├── InvalidArgument      BAD_NAME, BAD_ACTION, BAD_REQUEST, FIXED_DEALS_DISABLED, ...
    ├── NotFound             GAME_NOT_FOUND, TICKET_NOT_FOUND, ...
    ├── AlreadyExists        GAME_EXISTS, ALREADY_QUEUED, ...
    ├── FailedPrecondition   the rules' Reason (NOT_YOUR_TURN, ...), TICKET_CLOSED, ...
    ├── Aborted              STALE_ETAG, CONFLICT
    ├── OutOfRange
    ├── ResourceExhausted    RATE_LIMITED
    ├── Unavailable          STORE_UNAVAILABLE, GAME_SERVICE_UNAVAILABLE
    └── Internal             INTERNAL
"""

from __future__ import annotations

from enum import Enum
from typing import ClassVar, Final

__all__ = [
    "DOMAIN",
    "RETRY_AFTER_MS",
    "Aborted",
    "AlreadyExists",
    "Code",
    "FailedPrecondition",
    "Internal",
    "InvalidArgument",
    "NotFound",
    "OutOfRange",
    "PermissionDenied",
    "ResourceExhausted",
    "ServiceError",
    "Unauthenticated",
    "Unavailable",
    "rate_limited",
]

DOMAIN: Final = "truc.v1"
"""The ``ErrorInfo.domain`` of every truc error."""


class Code(Enum):
    """A status code: the name of the gRPC code it is sent as."""

    UNAUTHENTICATED = "UNAUTHENTICATED"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    NOT_FOUND = "NOT_FOUND"
    ALREADY_EXISTS = "ALREADY_EXISTS"
    FAILED_PRECONDITION = "FAILED_PRECONDITION"
    ABORTED = "ABORTED"
    OUT_OF_RANGE = "OUT_OF_RANGE"
    RESOURCE_EXHAUSTED = "RESOURCE_EXHAUSTED"
    UNAVAILABLE = "UNAVAILABLE"
    INTERNAL = "INTERNAL"


class ServiceError(Exception):
    """An error answered to the client: a status code, a reason, a message."""

    code: ClassVar[Code] = Code.INTERNAL

    def __init__(
        self, reason: str, message: str, *, metadata: dict[str, str] | None = None
    ) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message
        self.metadata = metadata or {}


class Unauthenticated(ServiceError):
    code = Code.UNAUTHENTICATED


class PermissionDenied(ServiceError):
    code = Code.PERMISSION_DENIED


class InvalidArgument(ServiceError):
    code = Code.INVALID_ARGUMENT


class NotFound(ServiceError):
    code = Code.NOT_FOUND


class AlreadyExists(ServiceError):
    code = Code.ALREADY_EXISTS


class FailedPrecondition(ServiceError):
    code = Code.FAILED_PRECONDITION


class Aborted(ServiceError):
    code = Code.ABORTED


class OutOfRange(ServiceError):
    code = Code.OUT_OF_RANGE


class ResourceExhausted(ServiceError):
    code = Code.RESOURCE_EXHAUSTED


class Unavailable(ServiceError):
    code = Code.UNAVAILABLE


class Internal(ServiceError):
    code = Code.INTERNAL


RETRY_AFTER_MS: Final = "retry_after_ms"
"""The metadata key of a RATE_LIMITED refusal's wait (milliseconds, an integer);
the gRPC status also carries it as a ``google.rpc.RetryInfo``, the gateway as
``Retry-After``."""


def rate_limited(retry_after_ms: int, what: str) -> ResourceExhausted:
    """The refusal of a call over a limit: RESOURCE_EXHAUSTED ``RATE_LIMITED``,
    asking the caller to wait ``retry_after_ms`` (at least 1) before ``what``
    (e.g. "more guest sign-ins from this address") is allowed again."""
    wait = max(int(retry_after_ms), 1)
    return ResourceExhausted(
        "RATE_LIMITED",
        f"too many {what}; retry in {wait} ms",
        metadata={RETRY_AFTER_MS: str(wait)},
    )
