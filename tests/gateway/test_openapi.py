"""The OpenAPI document: generated from the same route table the gateway serves,
checked in, served at /openapi.json, a valid OpenAPI 3 document, and the running
gateway fuzzed against it (schemathesis) without a single 5xx answer."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

from openapi_spec_validator import validate

from tests.service.conftest import SECRET
from truc_gateway.openapi import document, openapi_path, proto_comments, render
from truc_gateway.routes import route_table
from truc_service.tokens import issue_token

from .conftest import RestStack

ROOT = Path(__file__).resolve().parents[2]
CHECKED_IN = ROOT / "services/gateway/src/truc_gateway/openapi.json"


def test_the_checked_in_document_is_generated_from_the_proto_and_valid() -> None:
    assert CHECKED_IN.read_text() == render(proto_comments(ROOT / "proto"))
    spec = json.loads(CHECKED_IN.read_text())
    validate(spec)  # raises if it is not a valid OpenAPI 3 document
    for route in route_table():
        path, _ = openapi_path(route)
        operation = spec["paths"][path][route.http_method.lower()]
        assert operation["operationId"] == route.operation_id
    assert spec["paths"]["/v1/games/{game}:submitAction"]["post"]["description"]
    assert len(route_table()) == sum(len(p) for p in spec["paths"].values()) == 16
    play = spec["paths"]["/v1/games/{game}:play"]["get"]
    assert "101" in play["responses"] and "WebSocket" in play["responses"]["101"]["description"]
    assert play["x-websocket"]["client"]["$ref"].endswith("truc.v1.PlayRequest")


def test_every_enum_value_is_described() -> None:
    """Each value of each enum schema has its proto comment, in x-enumDescriptions and
    in the schema's description (a list "`NAME`: text")."""
    schemas = json.loads(CHECKED_IN.read_text())["components"]["schemas"]
    enums = {name: schema for name, schema in schemas.items() if "enum" in schema}
    assert {"truc.v1.Call", "truc.v1.Signal", "truc.v1.Directive", "truc.v1.Rank"} <= set(enums)
    missing = [
        f"{name}.{value}"
        for name, schema in enums.items()
        for value in schema["enum"]
        if not schema.get("x-enumDescriptions", {}).get(value, "").strip()
        or f"* `{value}`: " not in schema.get("description", "")
    ]
    assert not missing, f"enum values without a description (comment them in proto/): {missing}"
    call = enums["truc.v1.Call"]
    assert "manche" in call["x-enumDescriptions"]["CALL_BALOU_PARTIDO"]
    assert call["description"].startswith("Every call of the game")


def test_the_generator_follows_the_route_table() -> None:
    routes = route_table()
    spec = document(routes[:1])
    assert list(spec["paths"]) == ["/v1/games"]
    watch = next(r for r in routes if r.method.name == "WatchGame")
    assert openapi_path(watch) == ("/v1/games/{game}:watch", ["game"])


def test_the_gateway_serves_the_document(rest_stack: RestStack) -> None:
    with urllib.request.urlopen(rest_stack.url + "/openapi.json", timeout=5) as reply:
        assert reply.headers["Content-Type"].startswith("application/json")
        assert reply.read().decode() == CHECKED_IN.read_text()


def test_schemathesis_finds_no_server_error(rest_stack: RestStack, tmp_path: Path) -> None:
    token = issue_token(SECRET, "fuzzer", ttl_seconds=600)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "schemathesis.cli",
            "run",
            rest_stack.url + "/openapi.json",
            "--url",
            rest_stack.url,
            "--checks",
            "not_a_server_error,content_type_conformance",
            "--max-examples",
            "60",
            "--phases",
            "examples,coverage,fuzzing",
            "--seed",
            "7",
            "--request-timeout",
            "5",
            "--header",
            f"Authorization: Bearer {token}",
            "--generation-database",
            "none",
            "--report-dir",
            str(tmp_path),
            "--no-color",
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=150,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert "passed" in run.stdout
