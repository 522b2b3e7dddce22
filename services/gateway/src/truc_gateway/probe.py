"""``python -m truc_gateway.probe [ADDRESS]``: the gateway container's health check.

GETs ``http://ADDRESS/healthz`` (default ``127.0.0.1:8080``) and exits 0 if and
only if the gateway answers 200 with ``"status": "SERVING"``; 1 for anything
else: 503 NOT_SERVING while it stops, another HTTP server, nothing listening, a
timeout (Docker's HEALTHCHECK convention; Kubernetes uses an ``httpGet`` probe
of the same route instead). The game service and the lobby are probed over gRPC
health (:mod:`truc_service.probe`); the gateway serves HTTP only, so this probe
is its own and needs nothing beyond the standard library.
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
from collections.abc import Sequence

__all__ = ["check", "main"]

DEFAULT_ADDRESS = "127.0.0.1:8080"


def check(address: str, *, timeout: float = 2.0) -> str:
    """What ``GET /healthz`` at ``address`` (``host:port``) says: its ``status``
    (``SERVING``, ``NOT_SERVING``), ``HTTP <code>`` for an answer without one, or
    ``UNAVAILABLE`` when nothing answers in time."""
    connection = http.client.HTTPConnection(address, timeout=timeout)
    try:
        connection.request("GET", "/healthz", headers={"Accept": "application/json"})
        reply = connection.getresponse()
        body = reply.read()
    except (OSError, http.client.HTTPException):
        return "UNAVAILABLE"
    finally:
        connection.close()
    try:
        status = json.loads(body).get("status")
    except (ValueError, AttributeError):
        status = None
    if not isinstance(status, str):
        return f"HTTP {reply.status}"
    return status if reply.status in (200, 503) else f"HTTP {reply.status}"


def main(argv: Sequence[str] | None = None) -> int:
    """Probe the gateway; print what it said; 0 iff SERVING."""
    parser = argparse.ArgumentParser(
        prog="truc_gateway.probe",
        description="Exit 0 if and only if the gateway's /healthz says SERVING.",
    )
    parser.add_argument(
        "address", nargs="?", default=DEFAULT_ADDRESS, help=f"host:port, default {DEFAULT_ADDRESS}"
    )
    parser.add_argument("--timeout", type=float, default=2.0, help="seconds (default 2)")
    args = parser.parse_args(argv)
    status = check(args.address, timeout=args.timeout)
    print(f"{args.address} /healthz: {status}", file=sys.stderr)
    return 0 if status == "SERVING" else 1


if __name__ == "__main__":
    sys.exit(main())
