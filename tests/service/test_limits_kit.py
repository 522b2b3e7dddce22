"""The limits kit every service counts with: the Redis fixed-window counter
(truc_redis.limits), the per-replica Concurrency, and how a RATE_LIMITED refusal
travels (ErrorInfo metadata + google.rpc.RetryInfo, read back by clients)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from redis.asyncio import Redis

from truc_dev_redis import RedisServer
from truc_protocol.errors import RETRY_AFTER_MS, ResourceExhausted, rate_limited
from truc_protocol.status import STATUS_DETAILS, rate_limit_wait, retry_after_ms
from truc_redis.limits import RateLimit, count
from truc_service.errors import to_status
from truc_service.limits import Concurrency


class _Failed(grpc.RpcError):
    """A failed call as a client sees it: just its trailing metadata."""

    def __init__(self, trailing: tuple[tuple[str, str | bytes], ...]) -> None:
        self._trailing = trailing

    def trailing_metadata(self) -> Any:
        return self._trailing


@pytest.mark.unit
def test_rate_limited_carries_its_wait_as_metadata_and_as_retry_info() -> None:
    error = rate_limited(1234, "guest sign-ins from this address")
    assert isinstance(error, ResourceExhausted)
    assert error.reason == "RATE_LIMITED"
    assert error.metadata == {RETRY_AFTER_MS: "1234"}
    assert "guest sign-ins from this address" in error.message
    status = to_status(error, method="SignInGuest")
    assert status.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    details = dict(status.trailers)[STATUS_DETAILS]
    assert isinstance(details, bytes)
    rich = status_pb2.Status.FromString(details)
    retry = error_details_pb2.RetryInfo()
    assert [d.Unpack(retry) for d in rich.details if d.Is(retry.DESCRIPTOR)] == [True]
    assert retry.retry_delay.ToMilliseconds() == 1234
    # A client reads the wait from the RetryInfo, even without the plain trailer ...
    only_details = _Failed(((STATUS_DETAILS, details),))
    assert retry_after_ms(only_details) == 1234
    assert rate_limit_wait(only_details, 10.0) == pytest.approx(1.234)
    # ... and from the trailer of an older server that sends no RetryInfo.
    assert retry_after_ms(_Failed(((RETRY_AFTER_MS, "250"),))) == 250
    assert retry_after_ms(_Failed(())) is None


@pytest.mark.unit
def test_a_refusal_without_a_wait_has_no_retry_info() -> None:
    status = to_status(ResourceExhausted("RATE_LIMITED", "no wait said"), method="M")
    rich = status_pb2.Status.FromString(dict(status.trailers)[STATUS_DETAILS])
    assert not any(d.Is(error_details_pb2.RetryInfo.DESCRIPTOR) for d in rich.details)


@pytest.mark.unit
def test_rate_limited_never_asks_for_no_wait() -> None:
    assert rate_limited(0, "x").metadata[RETRY_AFTER_MS] == "1"


@pytest.mark.unit
def test_concurrency_counts_per_key_and_in_total() -> None:
    streams = Concurrency(per_key=2, total=3, what="watch streams", retry_after_ms=500)
    with streams.hold("ana"), streams.hold("ana"):
        with pytest.raises(ResourceExhausted) as full:
            streams.acquire("ana")
        assert full.value.reason == "RATE_LIMITED"
        assert full.value.metadata[RETRY_AFTER_MS] == "500"
        with streams.hold("bo"):
            assert streams.open == 3
            with pytest.raises(ResourceExhausted, match="on this replica"):
                streams.acquire("cy")
        assert streams.held("ana") == 2
    assert streams.open == 0 and streams.held("ana") == 0
    streams.release("nobody")  # releasing what was never held changes nothing
    assert streams.open == 0


@pytest.mark.unit
def test_a_refused_hold_holds_nothing() -> None:
    streams = Concurrency(per_key=1, total=0, what="sessions")
    with streams.hold("ana"):
        with pytest.raises(ResourceExhausted), streams.hold("ana"):
            pass  # pragma: no cover - the hold refuses before the block
        assert streams.held("ana") == 1
    assert streams.open == 0


@pytest.mark.unit
def test_zero_means_no_limit() -> None:
    streams = Concurrency(per_key=0, total=0, what="sessions")
    for _ in range(1000):
        streams.acquire("ana")
    assert streams.held("ana") == 1000
    with pytest.raises(ValueError):
        RateLimit(-1, 1000)
    with pytest.raises(ValueError):
        RateLimit(1, 0)


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with RedisServer() as server:
        yield server.url


def test_the_redis_counter_refuses_past_its_limit_until_the_window_ends(redis_url: str) -> None:
    async def scenario() -> None:
        client = Redis.from_url(redis_url)
        try:
            rate = RateLimit(3, 400)
            waits = [await count(client, "truc:test:limit", rate) for _ in range(5)]
            assert waits[:3] == [None, None, None]
            assert all(w is not None and 0 < w <= 400 for w in waits[3:])
            assert await count(client, "truc:test:other", rate) is None  # per key
            await asyncio.sleep(0.45)
            assert await count(client, "truc:test:limit", rate) is None  # a new window
            assert await client.pttl("truc:test:limit") > 0  # every counter expires
            assert await count(client, "truc:test:free", RateLimit(0, 1000)) is None
            assert await client.exists("truc:test:free") == 0  # no limit: no Redis call
        finally:
            await client.aclose()

    asyncio.run(scenario())


def test_a_counter_without_expiry_gets_one(redis_url: str) -> None:
    async def scenario() -> None:
        client = Redis.from_url(redis_url)
        try:
            await client.set("truc:test:stuck", 99)  # a counter that lost its expiry
            wait = await count(client, "truc:test:stuck", RateLimit(3, 5000))
            assert wait == 5000
            assert 0 < await client.pttl("truc:test:stuck") <= 5000
        finally:
            await client.aclose()

    asyncio.run(scenario())
