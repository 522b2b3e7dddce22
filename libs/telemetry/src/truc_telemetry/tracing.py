"""OpenTelemetry tracing of RPCs and store calls: off unless configured.

On when ``TRUC_TRACING=1`` or an OTLP endpoint is set
(``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``), and
never when ``OTEL_SDK_DISABLED=true`` (:func:`wanted`, called by each service's
config). Then the standard variables are honoured: ``OTEL_SERVICE_NAME``,
``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_TRACES_EXPORTER`` (``otlp``, the default,
over gRPC; ``console``, one JSON span per line on stdout; ``none``),
``OTEL_EXPORTER_OTLP_*``, ``OTEL_TRACES_SAMPLER``/``_ARG`` and ``OTEL_BSP_*``.

Each RPC is a SERVER span (its parent comes from the caller's ``traceparent``
metadata, W3C trace context); each store call made while serving it is a
CLIENT span below it. The REST gateway makes each HTTP request a SERVER span
(:func:`http_span`, its parent from the request's ``traceparent`` header) and
each call it forwards a CLIENT span below it (:func:`call_span`) whose context
goes to the service as ``traceparent`` metadata (:func:`outgoing`). While off,
:mod:`opentelemetry` is not even imported: none of these is called
(:data:`tracer` is None).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span, Tracer

__all__ = [
    "call_span",
    "configure",
    "end_http",
    "end_rpc",
    "http_span",
    "outgoing",
    "rpc_span",
    "shutdown",
    "store_span",
    "tracer",
    "wanted",
]

tracer: Tracer | None = None
"""The tracer while tracing is on; None while it is off."""
_provider: TracerProvider | None = None


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def wanted(env: Mapping[str, str]) -> bool:
    """Whether ``env`` asks for tracing."""
    if _true(env.get("OTEL_SDK_DISABLED")):
        return False
    return (
        _true(env.get("TRUC_TRACING"))
        or bool(env.get("OTEL_EXPORTER_OTLP_ENDPOINT"))
        or bool(env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
    )


def configure(service_name: str) -> None:
    """Start tracing (the exporter from ``OTEL_TRACES_EXPORTER``)."""
    global tracer, _provider  # noqa: PLW0603 - one tracer per process
    from opentelemetry import trace  # noqa: PLC0415 - imported only when tracing is on
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource  # noqa: PLC0415
    from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415
    from opentelemetry.sdk.trace.export import (  # noqa: PLC0415
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SpanExporter,
    )

    attributes = {} if os.environ.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: service_name}
    provider = TracerProvider(resource=Resource.create(attributes))
    kind = os.environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower()
    exporter: SpanExporter | None = None
    if kind == "console":
        exporter = ConsoleSpanExporter(
            out=sys.stdout, formatter=lambda span: span.to_json(indent=None) + "\n"
        )
    elif kind == "otlp":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (  # noqa: PLC0415
            OTLPSpanExporter,
        )

        exporter = OTLPSpanExporter()
    elif kind != "none":
        raise ValueError(f"OTEL_TRACES_EXPORTER: otlp, console or none, not {kind!r}")
    if exporter is not None:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    _provider = provider
    tracer = provider.get_tracer("truc")


def shutdown() -> None:
    """Export the spans still buffered and stop."""
    global tracer, _provider
    if _provider is not None:
        _provider.shutdown()
    tracer, _provider = None, None


def rpc_span(
    service: str, method: str, metadata: Iterable[tuple[str, str | bytes]] | None
) -> AbstractContextManager[Span]:
    """The SERVER span of one RPC, current while it runs (tracing must be on)."""
    from opentelemetry import propagate  # noqa: PLC0415 - cached after the first call
    from opentelemetry.trace import SpanKind  # noqa: PLC0415

    assert tracer is not None
    carrier = {key: value for key, value in metadata or () if isinstance(value, str)}
    return tracer.start_as_current_span(
        f"{service}/{method}",
        context=propagate.extract(carrier),
        kind=SpanKind.SERVER,
        attributes={"rpc.system": "grpc", "rpc.service": service, "rpc.method": method},
    )


def end_rpc(span: Span, code: str, code_value: int) -> None:
    """Record the RPC's status on its span."""
    from opentelemetry.trace import Status, StatusCode  # noqa: PLC0415

    span.set_attribute("rpc.grpc.status_code", code_value)
    if code != "OK":
        span.set_status(Status(StatusCode.ERROR, code))


def store_span(op: str) -> AbstractContextManager[Any]:
    """The CLIENT span of one store call (one Redis round trip; tracing must be on)."""
    from opentelemetry.trace import SpanKind  # noqa: PLC0415

    assert tracer is not None
    return tracer.start_as_current_span(
        f"redis {op}",
        kind=SpanKind.CLIENT,
        attributes={"db.system": "redis", "db.operation.name": op},
    )


def http_span(http_method: str, headers: Mapping[str, str]) -> AbstractContextManager[Span]:
    """The SERVER span of one HTTP request to the gateway, current while it is
    served (named once its route is known: :func:`end_http`)."""
    from opentelemetry import propagate  # noqa: PLC0415 - cached after the first call
    from opentelemetry.trace import SpanKind  # noqa: PLC0415

    assert tracer is not None
    return tracer.start_as_current_span(
        http_method,
        context=propagate.extract(headers),
        kind=SpanKind.SERVER,
        attributes={"http.request.method": http_method},
    )


def end_http(span: Span, http_method: str, route: str, status: int) -> None:
    """Name a request's span after its route (a bounded name: the RPC's, never
    the raw path) and record its HTTP status (5xx: an error)."""
    from opentelemetry.trace import Status, StatusCode  # noqa: PLC0415

    span.update_name(f"{http_method} {route}")
    span.set_attribute("http.route", route)
    span.set_attribute("http.response.status_code", status)
    if status >= 500:
        span.set_status(Status(StatusCode.ERROR, str(status)))


def call_span(service: str, method: str) -> AbstractContextManager[Span]:
    """The CLIENT span of one outgoing RPC (tracing must be on): pass
    :func:`outgoing` to the call as metadata while it is current."""
    from opentelemetry.trace import SpanKind  # noqa: PLC0415

    assert tracer is not None
    return tracer.start_as_current_span(
        f"{service}/{method}",
        kind=SpanKind.CLIENT,
        attributes={"rpc.system": "grpc", "rpc.service": service, "rpc.method": method},
    )


def outgoing() -> tuple[tuple[str, str], ...]:
    """The current span's context as gRPC metadata (``traceparent``, W3C)."""
    from opentelemetry import propagate  # noqa: PLC0415

    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return tuple(carrier.items())
