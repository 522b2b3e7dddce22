"""The floors of the stack, for ``make bench``: bare grpc.aio servers doing the
Redis work of an action and nothing else.

Run as a process: ``floor_server.py REDIS_URL STATE_BYTES RESPONSE_BYTES
[STREAM_RESPONSE_BYTES]``; it prints ``listening on 127.0.0.1:PORT`` and serves,
until SIGTERM:

* ``/bench.Floor/Call`` (unary, bytes in, bytes out): one Redis GET and one
  EVALSHA (GET + SET of a value of STATE_BYTES) per call; RESPONSE_BYTES back.
  The floor of unary ``SubmitAction`` (load, then compare-and-set).
* ``/bench.Floor/Play`` (bidirectional stream): the floor of a Play session.
  The first message names a group (a game); the stream gets one message
  carrying the group's current version at once, then one per new version. Every
  later message is an action: one EVALSHA (GET + SET of STATE_BYTES + PUBLISH
  of the value on the group's channel: the session's single round trip), then
  the new version's message (field 1: the version, varint; then padding to
  STREAM_RESPONSE_BYTES, default RESPONSE_BYTES) is queued to every stream of
  the group, each written by its own stream's loop. The floor's one pub/sub
  connection is subscribed to every group's channel and reads (and drops) each
  publication, as a replica hears its own commits. A client that half-closes
  gets the rest of its queue, then the end of the stream.

Same grpc.aio, redis-py and uvloop as the game service, so the difference
between a floor and the service is the service's own work.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import grpc
import uvloop
from redis.asyncio import Redis

_SCRIPT = """
local v = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1])
return 1
"""
_PLAY_SCRIPT = """
local v = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1])
redis.call('PUBLISH', KEYS[2], ARGV[1])
return 1
"""
_CHANNEL = "bench:floor:changed:"


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


@dataclass(slots=True)
class _Group:
    """The streams of one game on the floor."""

    key: str
    channel: str
    version: int = 1
    queues: set[asyncio.Queue[bytes | None]] = field(default_factory=set)


class _Sessions:
    """The ``Play`` floor: groups of streams, one pub/sub connection."""

    def __init__(self, redis: Redis, state_bytes: int, response_bytes: int) -> None:
        self._redis = redis
        self._script = redis.register_script(_PLAY_SCRIPT)
        self._value = b"s" * state_bytes
        padding = max(0, response_bytes - 4)
        self._padding = b"\x22" + _varint(padding) + b"r" * padding
        self._groups: dict[bytes, _Group] = {}
        self._pubsub = redis.pubsub(ignore_subscribe_messages=True)
        self._subscribed = asyncio.Event()
        self._listener: asyncio.Task[None] | None = None
        self.heard = 0

    def _message(self, version: int) -> bytes:
        return b"\x08" + _varint(version) + self._padding

    async def _listen(self) -> None:
        await self._subscribed.wait()
        while True:
            message = await self._pubsub.get_message(timeout=1.0)
            if message is not None and message.get("type") == "message":
                self.heard += 1  # a replica's own commit, heard again: dropped

    async def play(
        self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[bytes, bytes]
    ) -> None:
        name = await anext(requests)
        group = self._groups.get(name)
        if group is None:
            text = name.decode()
            group = self._groups[name] = _Group("bench:floor:" + text, _CHANNEL + text)
            await self._redis.set(group.key, self._value)
            await self._pubsub.subscribe(group.channel)
            self._subscribed.set()
            if self._listener is None:
                self._listener = asyncio.create_task(self._listen())
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        group.queues.add(queue)
        queue.put_nowait(self._message(group.version))

        async def read() -> None:
            async for _ in requests:
                await self._script(keys=[group.key, group.channel], args=[self._value])
                group.version += 1
                out = self._message(group.version)
                for each in group.queues:
                    each.put_nowait(out)
            queue.put_nowait(None)

        reader = asyncio.create_task(read())
        try:
            while (out := await queue.get()) is not None:
                await context.write(out)
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
            group.queues.discard(queue)
            if not group.queues and self._groups.get(name) is group:
                del self._groups[name]
                await self._pubsub.unsubscribe(group.channel)
                await self._redis.delete(group.key)


async def serve(
    redis_url: str, state_bytes: int, response_bytes: int, stream_response_bytes: int
) -> None:
    redis = Redis.from_url(redis_url)
    script = redis.register_script(_SCRIPT)
    value = b"s" * state_bytes
    response = b"r" * response_bytes
    await redis.set("bench:floor", value)
    sessions = _Sessions(redis, state_bytes, stream_response_bytes)

    async def call(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
        await redis.get("bench:floor")
        await script(keys=["bench:floor"], args=[value])
        return response

    server = grpc.aio.server()
    handler = grpc.method_handlers_generic_handler(
        "bench.Floor",
        {
            "Call": grpc.unary_unary_rpc_method_handler(
                call, request_deserializer=None, response_serializer=None
            ),
            "Play": grpc.stream_stream_rpc_method_handler(
                sessions.play, request_deserializer=None, response_serializer=None
            ),
        },
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"listening on 127.0.0.1:{port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)
    await stop.wait()
    await server.stop(1)
    await redis.aclose()


if __name__ == "__main__":
    response_size = int(sys.argv[3])
    stream_size = int(sys.argv[4]) if len(sys.argv) > 4 else response_size
    uvloop.run(serve(sys.argv[1], int(sys.argv[2]), response_size, stream_size))
