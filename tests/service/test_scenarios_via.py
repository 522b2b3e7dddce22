"""Every scenario file gives the same result through the running service as
through the engine (`truc scenario --via`), with the tokens the command signs."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest

from truc_client import dev_tokens
from truc_client.cli import main
from truc_client.remote_scenarios import run_scenario_via
from truc_client.scenarios import parse_scenario
from truc_rules.scenario import run_scenario
from truc_service import settings, tokens

from .conftest import SECRET, Replica

SCENARIOS = sorted((Path(__file__).resolve().parents[1] / "scenarios").glob("*/*.json"))


@pytest.fixture(scope="module")
def channels(replicas: list[Replica]) -> list[grpc.Channel]:
    return [grpc.insecure_channel(r.address) for r in replicas]


@pytest.mark.parametrize("path", SCENARIOS, ids=[f"{p.parent.name}/{p.stem}" for p in SCENARIOS])
def test_scenario_through_the_service_matches_the_engine(
    path: Path, channels: list[grpc.Channel]
) -> None:
    scenario = parse_scenario(json.loads(path.read_text(encoding="utf-8")))
    local = run_scenario(scenario)
    remote = run_scenario_via(scenario, channels[len(path.name) % 2], secret=SECRET)
    assert remote.result == local.result
    assert not remote.problems, "\n".join(remote.problems)


def test_the_command_prints_the_same_lines_via_the_service(
    replicas: list[Replica], capsys: pytest.CaptureFixture[str]
) -> None:
    paths = [str(p) for p in SCENARIOS[:4]]
    assert main(["scenario", *paths]) == 0
    local = capsys.readouterr().out
    assert main(["scenario", "--via", replicas[0].address, "--secret", SECRET, *paths]) == 0
    assert capsys.readouterr().out == local


# --------------------------------------------------------------------------- tokens


def test_the_clients_dev_key_is_the_services() -> None:
    """truc_client cannot import the service kit: its copy of the public key must agree."""
    assert dev_tokens.DEV_SECRET == settings.DEV_SECRET


@pytest.mark.parametrize("role", ["player", "lobby", "spectator"])
def test_the_command_signs_the_tokens_the_lobby_signs(role: str) -> None:
    signed = dev_tokens.issue_token(SECRET, "p1", role=role, now=1_700_000_000)
    assert signed == tokens.issue_token(SECRET, "p1", role=role, now=1_700_000_000)
    verifier = tokens.TokenVerifier(SECRET, issuer="truc-lobby", audience="truc-game")
    identity = verifier.verify(f"Bearer {dev_tokens.issue_token(SECRET, 'p1', role=role)}")
    assert (identity.player, identity.role) == ("p1", role)
