"""The layering rules, checked on the source: the rules engine is pure, and the
two services, the REST gateway and what the services share (truc_telemetry to
be observed, truc_redis to reach Redis) never import each other (the services
talk only through gRPC; the gateway knows only the protocol, truc.v1, and
truc_telemetry, never Redis; the shared libraries none of them)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "services/game/src/truc_game/rules"
GAME = ROOT / "services/game/src/truc_game"
LOBBY = ROOT / "services/lobby/src/truc_lobby"
CLIENT = ROOT / "clients/python/src/truc_client"
GATEWAY = ROOT / "services/gateway/src/truc_gateway"
TELEMETRY = ROOT / "libs/telemetry/src/truc_telemetry"
REDIS = ROOT / "libs/redis/src/truc_redis"

# What the pure engine may import: the standard library's pure parts only.
PURE_STDLIB = {
    "__future__",
    "collections",
    "dataclasses",
    "enum",
    "functools",
    "itertools",
    "json",
    "random",
    "types",
    "typing",
}


def imports(folder: Path) -> dict[str, set[str]]:
    """Top-level module names imported by each file (relative imports excluded)."""
    found: dict[str, set[str]] = {}
    for path in sorted(folder.rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
        found[str(path.relative_to(ROOT))] = names
    return found


def test_the_rules_engine_imports_nothing_but_pure_standard_modules() -> None:
    for path, names in imports(RULES).items():
        assert names <= PURE_STDLIB, f"{path} imports {sorted(names - PURE_STDLIB)}"


def test_the_rules_engine_uses_no_global_randomness() -> None:
    for path in RULES.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "random"
            ):
                assert node.attr == "Random", f"{path}: random.{node.attr}"


@pytest.mark.parametrize(
    ("folder", "forbidden"),
    [
        (GAME, "truc_lobby"),
        (LOBBY, "truc_game"),
        (CLIENT, "truc_game"),
        (CLIENT, "truc_lobby"),
        (GATEWAY, "truc_game"),
        (GATEWAY, "truc_lobby"),
        (GATEWAY, "truc_client"),
        (GAME, "truc_gateway"),
        (LOBBY, "truc_gateway"),
        (CLIENT, "truc_gateway"),
        (TELEMETRY, "truc_game"),
        (TELEMETRY, "truc_lobby"),
        (TELEMETRY, "truc_gateway"),
        (TELEMETRY, "truc_client"),
        (RULES, "truc_telemetry"),
        (REDIS, "truc_game"),
        (REDIS, "truc_lobby"),
        (REDIS, "truc_gateway"),
        (REDIS, "truc_client"),
        (REDIS, "truc_telemetry"),
        (RULES, "truc_redis"),
        (GATEWAY, "truc_redis"),
    ],
)
def test_services_and_client_do_not_import_each_other(folder: Path, forbidden: str) -> None:
    found = imports(folder)
    assert found, f"no sources in {folder}"
    for path, names in found.items():
        assert forbidden not in names, f"{path} imports {forbidden}"
