"""Observability shared by the game service and the lobby (which never import each
other): :mod:`.logs` (JSON or text lines with the request's context),
:mod:`.metrics` (Prometheus), :mod:`.tracing` (OpenTelemetry, off by default) and
:mod:`.interceptor` (the gRPC server interceptor that feeds all three)."""
