"""The chaos suite, short: real processes (Valkey behind the suite's proxies, two game
replicas, two lobbies, the gateway), 12 gRPC and 6 REST players, each fault of the
short schedule once, with ``appendfsync always`` and with ``everysec`` (a simulated
machine crash cuts the AOF's last second); then the checks must find no violation.
``make chaos`` is the long version (``python -m truc_chaos``)."""

from __future__ import annotations

import asyncio

import pytest

from truc_chaos.faults import short_schedule
from truc_chaos.report import table
from truc_chaos.run import RunConfig, chaos_run

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("appendfsync", ["always", "everysec"])
def test_a_short_chaos_run_finds_no_violation(appendfsync: str) -> None:
    config = RunConfig(
        appendfsync=appendfsync, short=True, settle_seconds=30.0, grpc_players=12, rest_players=6
    )
    result = asyncio.run(chaos_run(config))
    report = table(result)
    print(report)
    assert not result.harness, report
    # The run did what it says: players played through every fault of the schedule.
    assert {f.kind for f in result.journal.faults} == {s.kind for s in short_schedule(appendfsync)}
    assert result.journal.games_completed, report
    assert len(result.journal.acks) > 100, report
    assert {a.via for a in result.journal.acks} == {"grpc", "rest"}, report
    if appendfsync == "everysec":
        assert result.journal.truncations, report
    else:
        assert not [e for e in result.excused if e.check == "lost-ack"], report
    assert result.violations == [], report
