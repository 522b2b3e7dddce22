"""A latency histogram: constant memory, constant time per sample, percentiles
within 1% of the exact value.

Samples are durations in nanoseconds. Each falls in a bucket whose bounds grow
by :data:`GROWTH` (2%): bucket ``i`` holds ``[GROWTH**i, GROWTH**(i+1))`` ns, so
a long load run (millions of samples) keeps about a thousand counters. A
percentile is the nearest-rank sample (the smallest sample with at least
``q``% of all samples at or below it), reported as the geometric middle of its
bucket (off by at most 1%, and never beyond the largest sample seen); the
largest and smallest samples are kept exactly.
"""

from __future__ import annotations

import math
from typing import Final

__all__ = ["GROWTH", "LatencyHistogram"]

GROWTH: Final = 1.02
"""The ratio between the bounds of consecutive buckets."""
_SCALE: Final = 1.0 / math.log(GROWTH)


class LatencyHistogram:
    """Durations (ns) in logarithmic buckets; :meth:`percentile` in milliseconds."""

    __slots__ = ("_buckets", "count", "max_ns", "min_ns", "total_ns")

    def __init__(self) -> None:
        self._buckets: dict[int, int] = {}
        self.count = 0
        self.total_ns = 0
        self.max_ns = 0
        self.min_ns = 0

    def record(self, ns: int) -> None:
        """Add one duration (negative ones count as 0)."""
        ns = max(ns, 0)
        index = int(math.log(ns) * _SCALE) if ns > 1 else 0
        self._buckets[index] = self._buckets.get(index, 0) + 1
        if self.count == 0 or ns < self.min_ns:
            self.min_ns = ns
        self.count += 1
        self.total_ns += ns
        self.max_ns = max(self.max_ns, ns)

    def merge(self, other: LatencyHistogram) -> None:
        """Add every sample of ``other``."""
        if other.count == 0:
            return
        for index, n in other._buckets.items():
            self._buckets[index] = self._buckets.get(index, 0) + n
        self.min_ns = other.min_ns if self.count == 0 else min(self.min_ns, other.min_ns)
        self.count += other.count
        self.total_ns += other.total_ns
        self.max_ns = max(self.max_ns, other.max_ns)

    def percentile(self, q: float) -> float:
        """The ``q``-th percentile (0 < q <= 100) in ms; 0.0 without samples."""
        if not 0 < q <= 100:
            raise ValueError(f"a percentile is in (0, 100], not {q}")
        if self.count == 0:
            return 0.0
        rank = max(1, math.ceil(q / 100 * self.count))
        seen = 0
        for index in sorted(self._buckets):
            seen += self._buckets[index]
            if seen >= rank:
                middle = float(GROWTH ** (index + 0.5))
                return min(max(middle, self.min_ns), self.max_ns) / 1e6
        return self.max_ns / 1e6  # pragma: no cover (the counts add up to count)

    def summary(self) -> dict[str, float | int]:
        """``count`` and p50/p95/p99/max/mean in ms (rounded to µs), as the JSON report has it."""
        mean = self.total_ns / self.count / 1e6 if self.count else 0.0
        return {
            "count": self.count,
            "p50": round(self.percentile(50), 3),
            "p95": round(self.percentile(95), 3),
            "p99": round(self.percentile(99), 3),
            "max": round(self.max_ns / 1e6, 3),
            "mean": round(mean, 3),
        }
