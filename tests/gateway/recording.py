"""A real gRPC server that stands in for both services behind a test gateway and
records every call that reaches it: the method and its metadata. Unary calls
answer the empty response (or the status it is told to refuse with), server
streams send one empty message and end, a Play session reads its first message,
answers one empty message and ends. What the gateway sends upstream, or that it
sends nothing, is then a fact the tests read."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import grpc
from google.rpc import status_pb2

from truc_gateway.routes import SERVICES
from truc_protocol.status import STATUS_DETAILS

if TYPE_CHECKING:  # the stubs' generics, not subscriptable at run time
    _GenericHandler = grpc.GenericRpcHandler[bytes, bytes]
else:
    _GenericHandler = grpc.GenericRpcHandler


@dataclass(frozen=True)
class Recorded:
    method: str
    """The gRPC path, e.g. ``/truc.v1.LobbyService/SignInGuest``."""
    metadata: dict[str, str]


@dataclass
class RecordingUpstream:
    """A gRPC server on a free loopback port answering every truc.v1 method."""

    calls: list[Recorded] = field(default_factory=list)
    refusal: status_pb2.Status | None = None
    """When set, every unary call is refused with this status (and its details)."""
    stream_seconds: float = 0.0
    """How long a server stream stays open after its message (until cancelled)."""
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: Any = None
    port: int = 0

    def __post_init__(self) -> None:
        kinds = {
            f"/{service.full_name}/{method.name}": (
                method.client_streaming,
                method.server_streaming,
            )
            for service in SERVICES
            for method in service.methods
        }
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
        self._server.add_generic_rpc_handlers((_Handler(kinds, self._record, self),))
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        self._server.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _record(self, method: str, context: grpc.ServicerContext) -> None:
        metadata = {key: str(value) for key, value in context.invocation_metadata()}
        with self._lock:
            self.calls.append(Recorded(method, metadata))

    def recorded(self, suffix: str) -> list[Recorded]:
        """The calls whose method ends with ``suffix`` (e.g. ``/SignInGuest``)."""
        with self._lock:
            return [c for c in self.calls if c.method.endswith(suffix)]

    def clear(self) -> None:
        with self._lock:
            self.calls.clear()

    def stop(self) -> None:
        self._server.stop(None)


class _Handler(_GenericHandler):
    def __init__(
        self,
        kinds: dict[str, tuple[bool, bool]],
        record: Callable[[str, grpc.ServicerContext], None],
        upstream: RecordingUpstream,
    ) -> None:
        self._kinds = kinds
        self._record = record
        self._upstream = upstream

    def service(
        self, details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[bytes, bytes] | None:
        method = str(details.method)
        kind = self._kinds.get(method)
        if kind is None:
            return None

        def unary(request: bytes, context: grpc.ServicerContext) -> bytes:
            self._record(method, context)
            refusal = self._upstream.refusal
            if refusal is not None:
                context.set_trailing_metadata(((STATUS_DETAILS, refusal.SerializeToString()),))
                context.abort(_code(refusal.code), refusal.message)
            return b""

        def stream(request: bytes, context: grpc.ServicerContext) -> Iterator[bytes]:
            self._record(method, context)
            yield b""
            until = time.monotonic() + self._upstream.stream_seconds
            while context.is_active() and time.monotonic() < until:
                time.sleep(0.05)

        def session(requests: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[bytes]:
            self._record(method, context)
            next(requests, None)
            yield b""

        if kind == (True, True):
            return grpc.stream_stream_rpc_method_handler(session)
        if kind == (False, True):
            return grpc.unary_stream_rpc_method_handler(stream)
        return grpc.unary_unary_rpc_method_handler(unary)


def _code(number: int) -> grpc.StatusCode:
    return next(c for c in grpc.StatusCode if c.value[0] == number)
