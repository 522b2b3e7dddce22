"""The floor of the stack, for ``make bench``: a bare grpc.aio echo plus one Redis
GET and one EVALSHA of a stored value of the given size, per call.

Run as a process: ``floor_server.py REDIS_URL STATE_BYTES RESPONSE_BYTES``; it
prints ``listening on 127.0.0.1:PORT`` and serves ``/bench.Floor/Call`` (bytes
in, bytes out) until SIGTERM. Same grpc.aio, redis-py and uvloop as the game
service, so the difference between the two is the service's own work.
"""

from __future__ import annotations

import asyncio
import signal
import sys

import grpc
import uvloop
from redis.asyncio import Redis

_SCRIPT = """
local v = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1])
return 1
"""


async def serve(redis_url: str, state_bytes: int, response_bytes: int) -> None:
    redis = Redis.from_url(redis_url)
    script = redis.register_script(_SCRIPT)
    value = b"s" * state_bytes
    response = b"r" * response_bytes
    await redis.set("bench:floor", value)

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
            )
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
    uvloop.run(serve(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
