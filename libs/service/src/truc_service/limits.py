"""Limits on what a caller holds open at once on one replica (streams, sockets).

A :class:`Concurrency` counts, per key (a player, a client address) and in
total, the things this process holds open for callers. :meth:`Concurrency.hold`
takes one for the duration of a ``with`` block, or refuses with
RESOURCE_EXHAUSTED ``RATE_LIMITED`` (:func:`truc_protocol.errors.rate_limited`,
asking the caller to retry after ``retry_after_ms``) when the key or the
process is at its limit. It is in-process on purpose: it bounds what one
replica spends, and is exact without a round trip. Limits that must hold
across replicas are counted in Redis (:mod:`truc_redis.limits`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from truc_protocol.errors import rate_limited

__all__ = ["Concurrency"]


class Concurrency:
    """At most ``per_key`` open at once per key and ``total`` in all (0: no limit)."""

    def __init__(self, *, per_key: int, total: int, what: str, retry_after_ms: int = 1000) -> None:
        self._per_key = per_key
        self._total = total
        self._what = what
        self._retry_after_ms = retry_after_ms
        self._open: dict[str, int] = {}
        self._count = 0

    @property
    def open(self) -> int:
        """How many are held now, in all."""
        return self._count

    def held(self, key: str) -> int:
        """How many ``key`` holds now."""
        return self._open.get(key, 0)

    def acquire(self, key: str) -> None:
        """Take one for ``key``, or raise RESOURCE_EXHAUSTED ``RATE_LIMITED``."""
        if self._total and self._count >= self._total:
            raise rate_limited(self._retry_after_ms, f"{self._what} on this replica")
        held = self._open.get(key, 0)
        if self._per_key and held >= self._per_key:
            raise rate_limited(self._retry_after_ms, f"{self._what} open at once")
        self._open[key] = held + 1
        self._count += 1

    def release(self, key: str) -> None:
        """Give back one ``key`` took."""
        held = self._open.get(key, 0)
        if held <= 0:
            return
        if held == 1:
            del self._open[key]
        else:
            self._open[key] = held - 1
        self._count -= 1

    @contextmanager
    def hold(self, key: str) -> Iterator[None]:
        """One for ``key`` while the block runs (raises before it if at a limit)."""
        self.acquire(key)
        try:
            yield
        finally:
            self.release(key)
