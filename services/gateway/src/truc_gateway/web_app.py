"""The web app and the player's guide, served by the gateway itself.

* ``GET /``: the web app's page, ``web/index.html`` of this package.
* ``GET /app/<path>``: any other file of the package folder ``web/`` (scripts,
  styles, images), by :data:`CONTENT_TYPES` (an allowlist: another extension is
  404). ``/app/`` cannot collide with a REST route: those all start ``/v1/``.
* ``GET /app/guide.md``: the player's guide, ``text/markdown`` (the web app
  renders it); ``GET /guide``: a browser (``Accept`` naming ``text/html``) is
  sent (302) to the web app's guide screen, :data:`GUIDE_PAGE`, anything else
  (``curl``) gets the same text as ``text/plain``. The guide is ``docs/guide.md`` of the repository
  when the gateway runs from a source checkout (``make serve``: always the
  current text, never a copy in git), else ``guide.md`` beside this module,
  which the container build copies there (services/gateway/Dockerfile);
  :func:`guide_file`.

What a path may name: each segment of the *raw* path after ``/app/`` is
letters, digits, ``_``, ``-`` and ``.``, not starting with a dot, so neither
``..`` nor its percent-encoding (``%2e%2e``), an empty segment (``/app//etc``),
a hidden file nor a backslash gets through; the file found must be a regular
file inside ``web/`` once symbolic links are resolved. A folder is never
listed. Anything else is the gateway's usual 404 JSON (ROUTE_NOT_FOUND).
``GET`` and ``HEAD`` only (else 405 METHOD_NOT_ALLOWED, ``Allow: GET, HEAD``).

Caching: every answer carries a strong ``ETag`` (a hash of the content),
``Last-Modified`` and ``Cache-Control: no-cache`` (a browser revalidates each
time and gets ``304 Not Modified`` while the file is unchanged: a new release
shows at once, an unchanged one costs a header).

Security headers (:data:`SECURITY_HEADERS`, :func:`content_security_policy`):
a Content-Security-Policy allowing the gateway's own origin only (scripts,
styles, images, fonts; ``connect-src`` the REST/SSE routes and the WebSocket,
``ws://`` and ``wss://`` of the same host), no framing (``frame-ancestors
'none'``), no inline script, inline style or event-handler attribute;
``X-Content-Type-Options: nosniff``; ``Referrer-Policy: no-referrer``.
"""

from __future__ import annotations

import email.utils
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import grpc
from aiohttp import web

from .errors import GatewayError

__all__ = [
    "APP_PREFIX",
    "CONTENT_TYPES",
    "GUIDE_PAGE",
    "GUIDE_ROUTE",
    "SECURITY_HEADERS",
    "WEB_ROOT",
    "WebApp",
    "content_security_policy",
    "guide_file",
]

PACKAGE: Final = Path(__file__).resolve().parent
WEB_ROOT: Final = PACKAGE / "web"
"""The web app's files (the package folder ``web/``)."""
APP_PREFIX: Final = "/app/"
"""The web app's files are served under this path (``/app/app.js``)."""
INDEX: Final = "index.html"
GUIDE: Final = "guide.md"
"""The guide's file name: ``/app/guide.md``, ``docs/guide.md``, the packaged copy."""
GUIDE_ROUTE: Final = "/guide"
GUIDE_PAGE: Final = "/#guide"
"""Where the web app shows the guide (its ``#guide`` screen renders ``/app/guide.md``)."""
CONTENT_TYPES: Final = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml; charset=utf-8",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".webp": "image/webp",
    ".ico": "image/x-icon",
    ".woff2": "font/woff2",
    ".md": "text/markdown; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".json": "application/json; charset=utf-8",
    ".webmanifest": "application/manifest+json; charset=utf-8",
}
"""The files served, by extension; any other is 404."""
CACHE_CONTROL: Final = "no-cache"
SECURITY_HEADERS: Final = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
"""Beside the Content-Security-Policy, on every page and file of the web app."""
ALLOWED_METHODS: Final = ("GET", "HEAD")

_SEGMENT: Final = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")
_HOST: Final = re.compile(r"[A-Za-z0-9.-]+(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?")
_ROUTE_LABELS: Final = {"/": "web", GUIDE_ROUTE: "guide"}


def content_security_policy(host: str | None) -> str:
    """The policy of the web app's answers: its own origin only. ``host`` (the
    request's ``Host``) adds ``ws://`` and ``wss://`` of it to ``connect-src`` for
    browsers whose ``'self'`` does not cover WebSockets; left out if it is not a
    plain host[:port]."""
    connect = "'self'"
    if host and _HOST.fullmatch(host):
        connect += f" ws://{host} wss://{host}"
    return (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        f"font-src 'self'; connect-src {connect}; manifest-src 'self'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )


def guide_file(package: Path = PACKAGE) -> Path | None:
    """The player's guide: ``docs/guide.md`` of the repository when ``package`` is
    the source checkout's ``services/gateway/src/truc_gateway``, else ``guide.md``
    beside the package's modules (the container image's copy); None if neither is
    there."""
    candidates: list[Path] = []
    root = package.parents[3] if len(package.parents) > 3 else None
    if root is not None and package == root / "services" / "gateway" / "src" / "truc_gateway":
        candidates.append(root / "docs" / GUIDE)
    candidates.append(package / GUIDE)
    return next((path for path in candidates if path.is_file()), None)


@dataclass(frozen=True, slots=True)
class _File:
    """A file as last read: its content and validators, kept while it is unchanged."""

    stamp: tuple[int, int]
    """``(st_mtime_ns, st_size)`` when it was read."""
    body: bytes
    etag: str
    last_modified: str
    modified: float


class WebApp:
    """Answers ``/``, ``/guide`` and ``/app/...`` from the files of ``root``."""

    def __init__(self, root: Path = WEB_ROOT, package: Path = PACKAGE) -> None:
        self._root = root
        self._package = package
        self._files: dict[Path, _File] = {}

    @staticmethod
    def route_of(raw_path: str) -> str | None:
        """The metrics ``route`` label of a path this serves (``web``, ``guide``),
        None for any other path."""
        if raw_path.startswith(APP_PREFIX) or raw_path == APP_PREFIX.rstrip("/"):
            return "web"
        return _ROUTE_LABELS.get(raw_path)

    async def answer(self, request: web.Request) -> web.StreamResponse:
        """The file ``request`` names (or a 304), else a GatewayError (404, 405)."""
        raw_path = request.rel_url.raw_path
        if request.method not in ALLOWED_METHODS:
            raise GatewayError(
                405,
                grpc.StatusCode.UNIMPLEMENTED,
                "METHOD_NOT_ALLOWED",
                f"{request.method} is not allowed here; allowed: {', '.join(ALLOWED_METHODS)}",
                headers={"Allow": ", ".join(ALLOWED_METHODS)},
            )
        if raw_path == GUIDE_ROUTE and _wants_html(request) and (self._root / INDEX).is_file():
            return web.Response(status=302, headers={"Location": GUIDE_PAGE, **SECURITY_HEADERS})
        content_type, path = self._target(raw_path)
        found = self._read(path) if path is not None else None
        if found is None:
            raise _not_found(request.path)
        headers = {
            "ETag": found.etag,
            "Last-Modified": found.last_modified,
            "Cache-Control": CACHE_CONTROL,
            "Content-Security-Policy": content_security_policy(request.headers.get("Host")),
            **SECURITY_HEADERS,
        }
        if _unchanged(request, found):
            return web.Response(status=304, headers=headers)
        headers["Content-Type"] = content_type
        return web.Response(body=found.body, headers=headers)

    def _target(self, raw_path: str) -> tuple[str, Path | None]:
        """The content type and the file a path names (None: no such file may be)."""
        if raw_path == "/":
            return CONTENT_TYPES[".html"], self._root / INDEX
        if raw_path == GUIDE_ROUTE:
            return CONTENT_TYPES[".txt"], guide_file(self._package)
        relative = raw_path.removeprefix(APP_PREFIX)
        if relative == GUIDE:
            return CONTENT_TYPES[".md"], guide_file(self._package)
        segments = relative.split("/")
        if raw_path == relative or not all(_SEGMENT.fullmatch(s) for s in segments):
            return "", None
        content_type = CONTENT_TYPES.get(Path(segments[-1]).suffix.lower())
        if content_type is None:
            return "", None
        candidate = self._root.joinpath(*segments)
        try:
            resolved = candidate.resolve(strict=True)
            inside = resolved.is_relative_to(self._root.resolve(strict=True))
        except OSError:
            return "", None
        return content_type, resolved if inside else None

    def _read(self, path: Path) -> _File | None:
        """The regular file at ``path`` (read again only once it changed), or None."""
        try:
            status = path.stat()
            if not path.is_file():
                return None
            stamp = (status.st_mtime_ns, status.st_size)
            cached = self._files.get(path)
            if cached is not None and cached.stamp == stamp:
                return cached
            body = path.read_bytes()
        except OSError:
            return None
        digest = hashlib.sha256(body).hexdigest()[:32]
        read = _File(
            stamp,
            body,
            f'"{digest}"',
            email.utils.formatdate(status.st_mtime, usegmt=True),
            float(int(status.st_mtime)),
        )
        self._files[path] = read
        return read


def _wants_html(request: web.Request) -> bool:
    """A browser's navigation: its ``Accept`` names ``text/html``."""
    return "text/html" in request.headers.get("Accept", "")


def _unchanged(request: web.Request, found: _File) -> bool:
    """The request's validators say the client holds this version: ``If-None-Match``
    naming its ETag (or ``*``), else ``If-Modified-Since`` no earlier than it."""
    match = request.headers.get("If-None-Match")
    if match is not None:
        tags = {tag.strip().removeprefix("W/") for tag in match.split(",")}
        return "*" in tags or found.etag in tags
    since = request.headers.get("If-Modified-Since")
    if since is None:
        return False
    try:
        when = email.utils.parsedate_to_datetime(since)
    except (TypeError, ValueError):
        return False
    return when.timestamp() >= found.modified


def _not_found(path: str) -> GatewayError:
    return GatewayError(
        404,
        grpc.StatusCode.NOT_FOUND,
        "ROUTE_NOT_FOUND",
        f"no route for {path}: the web app is at /, its files under {APP_PREFIX}, "
        "the REST routes under /v1/ (see /openapi.json)",
    )
