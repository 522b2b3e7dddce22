"""CORS for browser front-ends: the configured origins (``TRUC_GATEWAY_CORS_ORIGINS``,
``*`` for any) get ``Access-Control-Allow-Origin`` on every answer, SSE streams
included, and preflight ``OPTIONS`` requests are answered here. Tokens travel in
the ``Authorization`` header, never in cookies, so credentials are not allowed.

An origin is ``scheme://host[:port]`` exactly, or ``scheme://host:*``: that host
on any port (or none), e.g. ``http://localhost:*`` for a front-end's development
server, whatever port it picked (``make serve`` allows ``http://localhost:*``,
``http://127.0.0.1:*`` and ``http://[::1]:*`` unless told otherwise; the
gateway's own default allows no origin).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from aiohttp import web

__all__ = ["ALLOWED_HEADERS", "ANY_PORT", "CorsPolicy"]

ALLOWED_HEADERS: Final = ("Authorization", "Content-Type", "Last-Event-ID")
EXPOSED_HEADERS: Final = ("Retry-After",)
MAX_AGE_SECONDS: Final = 600
ANY_PORT: Final = ":*"
"""An origin ending so allows its scheme and host on any port."""
_MAX_PORT: Final = 5


class CorsPolicy:
    def __init__(self, origins: Sequence[str]) -> None:
        self._any = "*" in origins
        self._origins = frozenset(o for o in origins if not o.endswith(ANY_PORT))
        self._any_port = frozenset(
            o.removesuffix(ANY_PORT) for o in origins if o.endswith(ANY_PORT)
        )

    def allows(self, origin: str) -> bool:
        origin = origin.rstrip("/")
        if self._any or origin in self._origins or origin in self._any_port:
            return True
        base, colon, port = origin.rpartition(":")
        return (
            bool(colon)
            and "://" in base
            and 0 < len(port) <= _MAX_PORT
            and port.isascii()
            and port.isdigit()
            and base in self._any_port
        )

    def decorate(self, request: web.BaseRequest, response: web.StreamResponse) -> None:
        """Add the CORS headers to an answer for an allowed origin."""
        origin = request.headers.get("Origin")
        if origin is None or not self.allows(origin):
            return
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Access-Control-Expose-Headers"] = ", ".join(EXPOSED_HEADERS)
        response.headers.add("Vary", "Origin")

    def preflight(self, methods: Sequence[str]) -> web.Response:
        """The answer to an allowed preflight for a path served by ``methods``."""
        return web.Response(
            status=204,
            headers={
                "Access-Control-Allow-Methods": ", ".join(methods),
                "Access-Control-Allow-Headers": ", ".join(ALLOWED_HEADERS),
                "Access-Control-Max-Age": str(MAX_AGE_SECONDS),
                "Allow": ", ".join((*methods, "OPTIONS")),
            },
        )
