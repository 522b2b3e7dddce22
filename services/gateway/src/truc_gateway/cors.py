"""CORS for browser front-ends: the configured origins (``TRUC_GATEWAY_CORS_ORIGINS``,
``*`` for any) get ``Access-Control-Allow-Origin`` on every answer, SSE streams
included, and preflight ``OPTIONS`` requests are answered here. Tokens travel in
the ``Authorization`` header, never in cookies, so credentials are not allowed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from aiohttp import web

__all__ = ["ALLOWED_HEADERS", "CorsPolicy"]

ALLOWED_HEADERS: Final = ("Authorization", "Content-Type", "Last-Event-ID")
EXPOSED_HEADERS: Final = ("Retry-After",)
MAX_AGE_SECONDS: Final = 600


class CorsPolicy:
    def __init__(self, origins: Sequence[str]) -> None:
        self._any = "*" in origins
        self._origins = frozenset(origins)

    def allows(self, origin: str) -> bool:
        return self._any or origin.rstrip("/") in self._origins

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
