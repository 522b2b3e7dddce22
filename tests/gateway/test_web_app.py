"""The web app and the guide, served by a real gateway process over HTTP: ``/``
and ``/app/...`` from a folder of files (``TRUC_GATEWAY_WEB_DIR``, here one the
test writes), their content types, caching (ETag, 304), HEAD, 405, the security
headers, and nothing outside the folder whatever the path says; ``/guide`` and
``/app/guide.md`` from ``docs/guide.md`` (or the package's copy)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from truc_gateway.web_app import WEB_ROOT, guide_file

from .conftest import Gateway, call
from .recording import RecordingUpstream
from .test_errors import run

PAGE = b"<!doctype html><title>Truc</title><script src=/app/app.js></script>"
FILES = {
    "index.html": PAGE,
    "app.js": b"export const truc = 1;\n",
    "style.css": b"body { margin: 0 }\n",
    "cards/as-of-swords.svg": b"<svg xmlns='http://www.w3.org/2000/svg'/>",
    "cards/back.png": b"\x89PNG\r\n\x1a\n",
    "notes.md": "# Règles\n".encode(),
    ".hidden.js": b"secret",
    "app.exe": b"MZ",
}
ROOT_REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("site")
    web = base / "web"
    for name, body in FILES.items():
        (web / name).parent.mkdir(parents=True, exist_ok=True)
        (web / name).write_bytes(body)
    (base / "outside.js").write_bytes(b"outside the web folder")
    (web / "leak.js").symlink_to(base / "outside.js")
    (web / "linked").symlink_to(base)  # a folder link out of web/
    (web / "inner.js").symlink_to(web / "app.js")  # a link inside it is fine
    return web


@pytest.fixture(scope="module")
def web_gateway(upstream: RecordingUpstream, site: Path) -> Iterator[Gateway]:
    gateway = Gateway(upstream.address, upstream.address, TRUC_GATEWAY_WEB_DIR=str(site))
    yield gateway
    code = gateway.stop()
    assert "Traceback" not in gateway.log(), gateway.log()
    assert code == 0, gateway.log()


def _raw_get(port: int, target: str) -> tuple[int, bytes]:
    """A GET with the request target exactly as given (no client normalizes it)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(
            f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
        )
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    status = int(answer.split(b" ", 2)[1])
    return status, answer.split(b"\r\n\r\n", 1)[1]


def test_the_files_are_served_with_their_types_and_security_headers(
    web_gateway: Gateway, upstream: RecordingUpstream
) -> None:
    url = web_gateway.url
    expected = {
        "/": ("text/html; charset=utf-8", PAGE),
        "/app/index.html": ("text/html; charset=utf-8", PAGE),
        "/app/app.js": ("text/javascript; charset=utf-8", FILES["app.js"]),
        "/app/app.js?v=2": ("text/javascript; charset=utf-8", FILES["app.js"]),
        "/app/inner.js": ("text/javascript; charset=utf-8", FILES["app.js"]),
        "/app/style.css": ("text/css; charset=utf-8", FILES["style.css"]),
        "/app/cards/as-of-swords.svg": (
            "image/svg+xml; charset=utf-8",
            FILES["cards/as-of-swords.svg"],
        ),
        "/app/cards/back.png": ("image/png", FILES["cards/back.png"]),
        "/app/notes.md": ("text/markdown; charset=utf-8", FILES["notes.md"]),
    }

    async def check(session: aiohttp.ClientSession) -> None:
        upstream.clear()
        for path, (kind, body) in expected.items():
            async with session.get(url + path) as response:
                assert response.status == 200, path
                assert response.headers["Content-Type"] == kind, path
                assert await response.read() == body, path
                headers = response.headers
                policy = headers["Content-Security-Policy"]
                assert "default-src 'none'" in policy and "script-src 'self'" in policy
                assert "style-src 'self'" in policy and "img-src 'self'" in policy
                assert "frame-ancestors 'none'" in policy
                host = f"127.0.0.1:{web_gateway.port}"
                assert f"connect-src 'self' ws://{host} wss://{host};" in policy, policy
                assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
                assert headers["X-Content-Type-Options"] == "nosniff"
                assert headers["Referrer-Policy"] == "no-referrer"
                assert headers["Cache-Control"] == "no-cache"
                assert headers["ETag"].startswith('"') and "Last-Modified" in headers
        assert upstream.calls == []  # the services are not involved

    run(check)


def test_nothing_outside_the_folder_nor_a_listing_is_served(web_gateway: Gateway) -> None:
    refused = [
        "/app/",  # a folder: never listed
        "/app",
        "/app/cards",
        "/app/cards/",
        "/app/missing.js",
        "/app/.hidden.js",  # hidden files
        "/app/app.exe",  # not a type the web app has
        "/app/leak.js",  # a symbolic link out of the folder
        "/app/linked/outside.js",  # through a linked folder
        "/app/../outside.js",  # dot segments are refused, never resolved
        "/app/cards/../app.js",
        "/app/%2e%2e/outside.js",
        "/app/%2E%2E/outside.js",
        "/app/cards/..%2f..%2foutside.js",
        "/app/%2fetc%2fpasswd",
        "/app//etc/passwd",
        "/app/..\\outside.js",
        "/app/cards%2f..%2f..%2foutside.js",
        "/index.html",  # only / and /app/... are the web app's
        "/app.js",
    ]
    for target in refused:
        status, body = _raw_get(web_gateway.port, target)
        assert status in (400, 404), (target, status, body)
        assert b"outside the web folder" not in body, target
        if status == 404:
            assert b'"reason":"ROUTE_NOT_FOUND"' in body, (target, body)
    status, body = _raw_get(web_gateway.port, "/app/cards/back.png")  # the same way: served
    assert (status, body) == (200, FILES["cards/back.png"])


def test_caching_head_and_methods(web_gateway: Gateway) -> None:
    url = web_gateway.url + "/app/app.js"

    async def check(session: aiohttp.ClientSession) -> None:
        async with session.get(url) as first:
            etag, modified = first.headers["ETag"], first.headers["Last-Modified"]
        for validators in ({"If-None-Match": etag}, {"If-None-Match": f'"x", {etag}'}):
            async with session.get(url, headers=validators) as again:
                assert again.status == 304, validators
                assert await again.read() == b""
                assert again.headers["ETag"] == etag
                assert "Content-Security-Policy" in again.headers
        async with session.get(url, headers={"If-None-Match": '"other"'}) as changed:
            assert changed.status == 200 and await changed.read() == FILES["app.js"]
        async with session.get(url, headers={"If-Modified-Since": modified}) as since:
            assert since.status == 304
        old = "Mon, 01 Jan 2001 00:00:00 GMT"
        async with session.get(url, headers={"If-Modified-Since": old}) as stale:
            assert stale.status == 200
        async with session.head(url) as head:
            assert head.status == 200 and await head.read() == b""
            assert head.headers["Content-Length"] == str(len(FILES["app.js"]))
            assert head.headers["Content-Type"] == "text/javascript; charset=utf-8"
        for method in ("POST", "PUT", "DELETE", "OPTIONS"):
            for path in ("/", "/app/app.js", "/guide"):
                reply = await call(session, method, web_gateway.url + path)
                assert (reply.status, reply.reason) == (405, "METHOD_NOT_ALLOWED"), (method, path)
                assert reply.headers["Allow"] == "GET, HEAD"

    run(check)


def test_a_changed_file_is_served_anew(web_gateway: Gateway, site: Path) -> None:
    url = web_gateway.url + "/app/changing.js"
    (site / "changing.js").write_bytes(b"one")

    async def check(session: aiohttp.ClientSession) -> None:
        async with session.get(url) as first:
            assert await first.read() == b"one"
            etag = first.headers["ETag"]
        (site / "changing.js").write_bytes(b"two, longer")
        async with session.get(url, headers={"If-None-Match": etag}) as second:
            assert second.status == 200 and await second.read() == b"two, longer"
            assert second.headers["ETag"] != etag

    run(check)


def test_the_guide_is_served_from_the_repository(web_gateway: Gateway) -> None:
    guide = ROOT_REPO / "docs" / "guide.md"
    assert guide_file() == (guide if guide.is_file() else None)

    async def check(session: aiohttp.ClientSession) -> None:
        for path, kind in (
            ("/guide", "text/plain; charset=utf-8"),
            ("/app/guide.md", "text/markdown; charset=utf-8"),
        ):
            async with session.get(web_gateway.url + path) as response:
                if not guide.is_file():  # docs/guide.md not written yet
                    assert response.status == 404, path
                    continue
                assert response.status == 200, path
                assert response.headers["Content-Type"] == kind
                assert await response.read() == guide.read_bytes()
                assert "Content-Security-Policy" in response.headers
        # A browser's navigation to /guide: the web app's guide screen.
        browser = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
        async with session.get(
            web_gateway.url + "/guide", headers=browser, allow_redirects=False
        ) as response:
            assert (response.status, response.headers["Location"]) == (302, "/#guide")

    run(check)


def test_the_guide_is_found_in_a_checkout_or_beside_the_package(tmp_path: Path) -> None:
    checkout = tmp_path / "repo"
    package = checkout / "services" / "gateway" / "src" / "truc_gateway"
    package.mkdir(parents=True)
    assert guide_file(package) is None
    (checkout / "docs").mkdir()
    (checkout / "docs" / "guide.md").write_text("# the repository's")
    assert guide_file(package) == checkout / "docs" / "guide.md"
    # An installed package (site-packages/truc_gateway): its own copy only.
    installed = tmp_path / "lib" / "python3.11" / "site-packages" / "truc_gateway"
    installed.mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# not this one")
    assert guide_file(installed) is None
    (installed / "guide.md").write_text("# the image's copy")
    assert guide_file(installed) == installed / "guide.md"


def test_without_the_web_app_the_root_is_a_json_404(upstream: RecordingUpstream) -> None:
    gateway = Gateway(upstream.address, upstream.address, TRUC_GATEWAY_WEB_DIR="/nonexistent")
    try:

        async def check(session: aiohttp.ClientSession) -> None:
            reply = await call(session, "GET", gateway.url + "/")
            assert (reply.status, reply.reason) == (404, "ROUTE_NOT_FOUND"), reply.body
            assert "/openapi.json" in reply.body["message"]

        run(check)
    finally:
        assert gateway.stop() == 0, gateway.log()


def test_the_package_folder_is_served_by_default(upstream: RecordingUpstream) -> None:
    """Without TRUC_GATEWAY_WEB_DIR: the package's web/ (whatever the web app has)."""
    index = WEB_ROOT / "index.html"
    gateway = Gateway(upstream.address, upstream.address)
    try:

        async def check(session: aiohttp.ClientSession) -> None:
            async with session.get(gateway.url + "/") as response:
                if index.is_file():
                    assert response.status == 200
                    assert await response.read() == index.read_bytes()
                else:
                    assert response.status == 404

        run(check)
    finally:
        assert gateway.stop() == 0, gateway.log()
