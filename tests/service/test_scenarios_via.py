"""Every scenario file gives the same result through the running service as
through the engine (`truc scenario --via`)."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest

from truc_game.remote_scenarios import run_scenario_via
from truc_game.scenarios import run_scenario

from .conftest import SECRET, Replica

SCENARIOS = sorted((Path(__file__).resolve().parents[1] / "scenarios").glob("*/*.json"))


@pytest.fixture(scope="module")
def channels(replicas: list[Replica]) -> list[grpc.Channel]:
    return [grpc.insecure_channel(r.address) for r in replicas]


@pytest.mark.parametrize("path", SCENARIOS, ids=[f"{p.parent.name}/{p.stem}" for p in SCENARIOS])
def test_scenario_through_the_service_matches_the_engine(
    path: Path, channels: list[grpc.Channel]
) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    local = run_scenario(doc)
    remote = run_scenario_via(doc, channels[len(path.name) % 2], secret=SECRET)
    assert remote.result == local.result
    assert not remote.problems, "\n".join(remote.problems)
