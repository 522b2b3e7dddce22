"""The gRPC health probe shared by both services' container health checks.

:func:`check` asks a server's standard health service (``grpc.health.v1``) for
the status of one service (``""``: the whole server) and :func:`main` is the
command line behind ``python -m truc_service.probe ADDRESS`` (the
HEALTHCHECK of the game and lobby images): it exits 0 if and only if the
answer is SERVING, 1 for any
other answer, an unreachable server or a timeout (Docker's HEALTHCHECK
convention; Kubernetes uses its native ``grpc:`` probes instead). The services
never import each other; both depend on this package.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

__all__ = ["check", "main"]


def check(address: str, *, service: str = "", timeout: float = 2.0) -> str:
    """The health status name of ``service`` at ``address`` (``SERVING``,
    ``NOT_SERVING``, ...) or, when the call fails, its status code's name
    (``UNAVAILABLE``, ``NOT_FOUND`` for an unknown service, ``DEADLINE_EXCEEDED``)."""
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
        except grpc.RpcError as error:
            code: grpc.StatusCode = error.code()
            return str(code.name)
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


def main(argv: Sequence[str] | None, *, prog: str, default_address: str) -> int:
    """Probe the server; print its status; 0 iff SERVING."""
    parser = argparse.ArgumentParser(
        prog=prog, description="Exit 0 if and only if the server's gRPC health is SERVING."
    )
    parser.add_argument(
        "address", nargs="?", default=default_address, help=f"default {default_address}"
    )
    parser.add_argument("--service", default="", help="a service name ('' = the whole server)")
    parser.add_argument("--timeout", type=float, default=2.0, help="seconds (default 2)")
    args = parser.parse_args(argv)
    status = check(args.address, service=args.service, timeout=args.timeout)
    print(f"{args.address} {args.service or '(server)'}: {status}", file=sys.stderr)
    return 0 if status == "SERVING" else 1


if __name__ == "__main__":
    sys.exit(main(None, prog="python -m truc_service.probe", default_address="127.0.0.1:50051"))
