"""The chaos suite's TCP proxy: it passes bytes through, delays them on command, and a
cut aborts every open connection and refuses new ones for a while."""

from __future__ import annotations

import asyncio
import time

import pytest

from truc_chaos.proxy import TcpProxy

pytestmark = pytest.mark.integration


async def _echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass  # the proxy cut it
    finally:
        writer.close()


async def _round_trip(port: int, payload: bytes) -> tuple[bytes, float]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    start = time.monotonic()
    writer.write(payload)
    await writer.drain()
    data = await reader.readexactly(len(payload))
    elapsed = time.monotonic() - start
    writer.close()
    return data, elapsed


async def _scenario() -> None:
    server = await asyncio.start_server(_echo, "127.0.0.1", 0)
    target = server.sockets[0].getsockname()[1]
    proxy = TcpProxy("127.0.0.1", target)
    port = await proxy.start()
    try:
        data, fast = await _round_trip(port, b"x" * 100_000)
        assert data == b"x" * 100_000

        proxy.set_latency(0.1)
        data, slow = await _round_trip(port, b"ping")
        assert data == b"ping"
        assert slow >= 0.2 > fast  # 100 ms each way
        proxy.set_latency(0.0)

        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"hello")
        assert await reader.readexactly(5) == b"hello"
        assert proxy.cut(0.5) == 1
        assert await reader.read(10) == b""  # aborted under the client
        writer.close()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        assert await reader.read(10) == b""  # refused while the cut lasts
        writer.close()
        await asyncio.sleep(0.6)
        data, _ = await _round_trip(port, b"again")
        assert data == b"again"
        assert proxy.stats.refused == 1
    finally:
        await proxy.close()
        server.close()
        await server.wait_closed()


def test_the_proxy_passes_delays_and_cuts() -> None:
    asyncio.run(_scenario())
