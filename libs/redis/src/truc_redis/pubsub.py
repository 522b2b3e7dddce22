"""Reading publications: the loop body every pub/sub listener of the services shares."""

from __future__ import annotations

import asyncio
import logging

from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

__all__ = ["next_publication"]


async def next_publication(
    pubsub: PubSub, *, prefix: str, log: logging.Logger, listener: str
) -> tuple[str, bytes] | None:
    """The next message published on a channel ``prefix + name`` (subscribed by
    name or by pattern): ``(name, data)``. None when nothing came within a second,
    or when the connection was lost: logged as ``listener``'s, then a half-second
    pause so that reconnecting does not spin."""
    try:
        message = await pubsub.get_message(timeout=1.0)
    except RedisError as exc:
        log.warning("%s lost its pub/sub connection: %s", listener, exc)
        await asyncio.sleep(0.5)
        return None
    if message is None or message.get("type") not in ("message", "pmessage"):
        return None
    channel: str = message["channel"].decode()
    if not channel.startswith(prefix):
        return None
    return channel[len(prefix) :], message["data"]
