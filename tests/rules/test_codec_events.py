"""The event-log encoding refuses what it did not write."""

from __future__ import annotations

import pytest

from truc_rules import InvalidSetup
from truc_rules.truc_y_flou.codec import decode_events


@pytest.mark.parametrize(
    "data",
    [b"", b"{", b"[[999]]", b"[[0]]", b'[["x", 1]]', b"[[6, 0]]", b"[[12, 0, 99, 1]]"],
)
def test_corrupt_event_log_entries_are_refused(data: bytes) -> None:
    with pytest.raises(InvalidSetup):
        decode_events(data)
