"""Every scenario file gives the same result through the running service as
through the engine (`truc scenario --via`), with the tokens the command signs."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import jwt
import pytest

from truc_client.cli import main
from truc_client.remote_scenarios import run_scenario_via
from truc_client.scenarios import parse_scenario
from truc_protocol.tokens import issue_token
from truc_rules.scenario import run_scenario
from truc_service import tokens

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


@pytest.mark.parametrize("role", ["player", "lobby", "spectator"])
def test_the_protocols_tokens_are_the_jwts_a_jwt_library_signs(role: str) -> None:
    """The standard-library signer (the client may not depend on PyJWT through the
    service kit) writes exactly what PyJWT writes for the same claims."""
    signed = issue_token(SECRET, "p1", role=role, now=1_700_000_000)
    claims = {
        "sub": "p1",
        "role": role,
        "iss": "truc-lobby",
        "aud": "truc-game",
        "iat": 1_700_000_000,
        "exp": 1_700_003_600,
    }
    assert signed == jwt.encode(claims, SECRET, algorithm="HS256")
    verifier = tokens.TokenVerifier(SECRET, issuer="truc-lobby", audience="truc-game")
    identity = verifier.verify(f"Bearer {issue_token(SECRET, 'p1', role=role)}")
    assert (identity.player, identity.role) == ("p1", role)
