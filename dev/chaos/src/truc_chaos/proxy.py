"""A TCP proxy of the suite's own (standard library only) between the services and Redis.

It passes traffic through unchanged, and on command it

* adds latency: every chunk, in both directions, is delivered ``latency`` seconds
  after it was read (order and throughput are kept: a queue per direction);
* cuts: every open connection is aborted at once (both sides see a reset) and new
  connections are refused (accepted and closed at once) for a while.

:class:`TcpProxy` is the asyncio proxy; ``python -m truc_chaos.proxy --target
HOST:PORT`` runs one as a process (its own event loop, so the players' load never
delays Redis traffic), prints ``proxy listening on HOST:PORT`` and reads commands,
one a line, on stdin: ``latency MS``, ``cut SECONDS``, ``pass`` (no latency, accept
again) and ``quit``. Each command is answered with one ``ok ...`` line on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["ProxyStats", "TcpProxy", "main"]

_CHUNK = 65536


@dataclass(slots=True)
class ProxyStats:
    accepted: int = 0
    refused: int = 0
    cuts: int = 0
    aborted: int = 0
    """Connections aborted by cuts (or because the other side failed)."""


@dataclass(slots=True, eq=False)
class _Link:
    """One client connection and its upstream connection."""

    client: asyncio.StreamWriter
    upstream: asyncio.StreamWriter | None = None
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    def abort(self) -> None:
        for writer in (self.client, self.upstream):
            if writer is not None:
                writer.transport.abort()
        current = asyncio.current_task()
        for task in self.tasks:
            if task is not current:
                task.cancel()


class TcpProxy:
    """Listens on ``listen_host:listen_port`` (0: a free port) and forwards to the target."""

    def __init__(
        self,
        target_host: str,
        target_port: int,
        *,
        listen_host: str = "127.0.0.1",
        listen_port: int = 0,
    ) -> None:
        self.target_host = target_host
        self.target_port = target_port
        self.listen_host = listen_host
        self._listen_port = listen_port
        self.latency = 0.0
        self.stats = ProxyStats()
        self._refuse_until = 0.0
        self._links: set[_Link] = set()
        self._server: asyncio.Server | None = None

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the proxy is not started")
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    @property
    def open_connections(self) -> int:
        return len(self._links)

    async def start(self) -> int:
        self._server = await asyncio.start_server(
            self._accept, self.listen_host, self._listen_port, reuse_address=True
        )
        return self.port

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for link in list(self._links):
            link.abort()
        self._links.clear()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    def set_latency(self, seconds: float) -> None:
        self.latency = max(0.0, seconds)

    def cut(self, refuse_seconds: float) -> int:
        """Abort every open connection and refuse new ones for ``refuse_seconds``;
        how many connections were cut."""
        self.stats.cuts += 1
        self._refuse_until = time.monotonic() + max(0.0, refuse_seconds)
        links = list(self._links)
        for link in links:
            link.abort()
        self._links.clear()
        self.stats.aborted += len(links)
        return len(links)

    def accept_again(self) -> None:
        self._refuse_until = 0.0

    @property
    def refusing(self) -> bool:
        return time.monotonic() < self._refuse_until

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.refusing:
            self.stats.refused += 1
            writer.transport.abort()
            return
        self.stats.accepted += 1
        link = _Link(writer)
        self._links.add(link)
        try:
            up_reader, up_writer = await asyncio.open_connection(self.target_host, self.target_port)
        except OSError:
            self._links.discard(link)
            writer.transport.abort()
            return
        if link not in self._links:  # cut while connecting
            up_writer.transport.abort()
            return
        link.upstream = up_writer
        link.tasks = [
            asyncio.create_task(self._pump(reader, up_writer, link)),
            asyncio.create_task(self._pump(up_reader, writer, link)),
        ]

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, link: _Link
    ) -> None:
        """Forward one direction; a delay queue when latency is set."""
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()
        deliver = asyncio.create_task(self._deliver(queue, writer))
        try:
            while True:
                data = await reader.read(_CHUNK)
                if not data:
                    break
                await queue.put((time.monotonic() + self.latency, data))
            await queue.put((0.0, b""))
            await deliver
        except (OSError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            deliver.cancel()
            raise
        finally:
            if not deliver.done():
                deliver.cancel()
            self._links.discard(link)
            link.abort()

    @staticmethod
    async def _deliver(
        queue: asyncio.Queue[tuple[float, bytes]], writer: asyncio.StreamWriter
    ) -> None:
        while True:
            due, data = await queue.get()
            if not data:
                with contextlib.suppress(OSError):
                    await writer.drain()
                return
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()


def _target(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, not {text!r}")
    return host, int(port)


async def _serve(target: tuple[str, int], port: int) -> int:
    proxy = TcpProxy(*target, listen_port=port)
    listening = await proxy.start()
    print(f"proxy listening on 127.0.0.1:{listening} (to {target[0]}:{target[1]})", flush=True)
    loop = asyncio.get_running_loop()
    try:
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line:
                return 0
            words = line.split()
            if not words:
                continue
            command, args = words[0], words[1:]
            if command == "latency" and args:
                proxy.set_latency(float(args[0]) / 1000)
                print(f"ok latency {args[0]} ms", flush=True)
            elif command == "cut":
                cut = proxy.cut(float(args[0]) if args else 0.0)
                print(f"ok cut {cut} connections", flush=True)
            elif command == "pass":
                proxy.set_latency(0.0)
                proxy.accept_again()
                print("ok pass", flush=True)
            elif command == "stats":
                s = proxy.stats
                print(
                    f"ok stats accepted={s.accepted} refused={s.refused} cuts={s.cuts} "
                    f"aborted={s.aborted} open={proxy.open_connections}",
                    flush=True,
                )
            elif command == "quit":
                print("ok quit", flush=True)
                return 0
            else:
                print(f"error unknown command {line.strip()!r}", flush=True)
    finally:
        await proxy.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m truc_chaos.proxy",
        description="A TCP proxy that can add latency and cut connections (commands on stdin).",
    )
    parser.add_argument("--target", type=_target, required=True, metavar="HOST:PORT")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: a free one)")
    args = parser.parse_args(argv)
    return asyncio.run(_serve(args.target, args.port))


if __name__ == "__main__":
    sys.exit(main())
