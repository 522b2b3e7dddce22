"""The layering rules, checked on the source and on what importing a module loads.

The packages, bottom up (each may import only those below it)::

    truc_rules      the pure rules: the standard library only
    truc_protocol   generated truc.v1 stubs + proto <-> rules conversion, errors
    truc_telemetry, truc_redis, truc_bots, truc_service (the service kit)
    truc_game, truc_lobby, truc_gateway    the services (never each other)
    truc_client     the client library and the truc command (rich lives here)
    truc_dev_redis  development only: never imported by a service or library
    truc_chaos      development only (the chaos suite): may import anything, nothing imports it

Inside the rules library, each rule set has one home: ``truc_y_flou/`` and the
variants.md engine ``family/`` never import each other or a rule set module;
``french_truc/``, ``sackson_truc/``, ``partnership_truc/`` and
``catalan_truc/`` import ``family`` and the shared modules (cards, actions,
events, errors, tricks, rule_set) only, Sackson's and partnership Truc also
``french_truc`` (variants.md defines them as it, with exceptions);
``registry`` (and what uses it) is the one place that knows them all.

Inside the game service: the use cases (service, deadlines, ports, names, the
in-memory adapter) import neither grpc nor redis, not even through what they
import; ``api/`` imports no store adapter and no Redis.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "libs/rules/src/truc_rules"
PROTOCOL = ROOT / "libs/protocol/src/truc_protocol"
SERVICE_KIT = ROOT / "libs/service/src/truc_service"
BOTS = ROOT / "libs/bots/src/truc_bots"
TELEMETRY = ROOT / "libs/telemetry/src/truc_telemetry"
REDIS = ROOT / "libs/redis/src/truc_redis"
DEV_REDIS = ROOT / "dev/redis/src/truc_dev_redis"
CHAOS = ROOT / "dev/chaos/src/truc_chaos"
GAME = ROOT / "services/game/src/truc_game"
LOBBY = ROOT / "services/lobby/src/truc_lobby"
GATEWAY = ROOT / "services/gateway/src/truc_gateway"
CLIENT = ROOT / "clients/python/src/truc_client"

FIRST_PARTY = {
    "truc",
    "truc_rules",
    "truc_protocol",
    "truc_service",
    "truc_bots",
    "truc_telemetry",
    "truc_redis",
    "truc_dev_redis",
    "truc_chaos",
    "truc_game",
    "truc_lobby",
    "truc_gateway",
    "truc_client",
}

# What each package may import of the project's own (besides itself).
ALLOWED: dict[Path, set[str]] = {
    RULES: set(),
    PROTOCOL: {"truc", "truc_rules"},
    TELEMETRY: set(),
    REDIS: {"truc_protocol"},
    BOTS: {"truc", "truc_rules", "truc_protocol"},
    SERVICE_KIT: {"truc", "truc_protocol", "truc_telemetry"},
    GAME: {"truc", "truc_rules", "truc_protocol", "truc_service", "truc_redis", "truc_telemetry"},
    LOBBY: {
        "truc",
        "truc_rules",
        "truc_protocol",
        "truc_service",
        "truc_redis",
        "truc_telemetry",
        "truc_bots",
    },
    GATEWAY: {"truc", "truc_protocol", "truc_service", "truc_telemetry"},
    CLIENT: {"truc", "truc_rules", "truc_protocol", "truc_bots"},
    DEV_REDIS: set(),
    CHAOS: FIRST_PARTY - {"truc_chaos"},
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


def loaded_by(*modules: str) -> set[str]:
    """Top-level names of every module that importing ``modules`` loads (a fresh interpreter)."""
    code = (
        "import importlib, json, sys\n"
        f"for m in {list(modules)!r}: importlib.import_module(m)\n"
        "print(json.dumps(sorted({n.split('.')[0] for n in sys.modules})))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=60
    )
    return set(json.loads(out.stdout))


@pytest.mark.parametrize("package", list(ALLOWED), ids=lambda p: p.name)
def test_each_package_imports_only_the_layers_below_it(package: Path) -> None:
    found = imports(package)
    assert found, f"no sources in {package}"
    own = package.name
    for path, names in found.items():
        project = (names & FIRST_PARTY) - {own}
        assert project <= ALLOWED[package], f"{path} imports {sorted(project - ALLOWED[package])}"


@pytest.mark.parametrize("service", [GAME, LOBBY, GATEWAY], ids=lambda p: p.name)
def test_no_service_imports_the_client_package(service: Path) -> None:
    for path, names in imports(service).items():
        assert "truc_client" not in names, f"{path} imports truc_client"
        assert "rich" not in names, f"{path} imports rich (terminal output is the client's)"


def test_the_rules_library_imports_only_the_standard_library() -> None:
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    for path, names in imports(RULES).items():
        assert names <= stdlib | {"truc_rules"}, f"{path} imports {sorted(names - stdlib)}"
    # ... and nothing else is loaded along the way.
    loaded = loaded_by("truc_rules", "truc_rules.scenario")
    foreign = {n for n in loaded if n not in stdlib and not n.startswith("_")}
    assert foreign <= {"truc_rules"}, f"importing truc_rules loads {sorted(foreign)}"


_SHARED_RULES = {"cards", "actions", "events", "event_codec", "errors", "tricks", "rule_set"}
_RULE_SET_HOMES = {
    "truc_y_flou": _SHARED_RULES,
    "family": _SHARED_RULES,
    "french_truc": _SHARED_RULES | {"family"},
    # variants.md defines these two "as french_truc, except ...": they build on it.
    "sackson_truc": _SHARED_RULES | {"family", "french_truc"},
    "partnership_truc": _SHARED_RULES | {"family", "french_truc"},
    "catalan_truc": _SHARED_RULES | {"family"},
}


def _rules_modules(path: Path) -> set[str]:
    """The truc_rules modules (first component under the package) a file imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[0] == "truc_rules":
                if len(parts) > 1:
                    found.add(parts[1])
                else:
                    found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "truc_rules" and len(parts) > 1:
                    found.add(parts[1])
    return found


@pytest.mark.parametrize("home", sorted(_RULE_SET_HOMES))
def test_each_rule_set_has_one_home_that_imports_no_other(home: str) -> None:
    files = sorted((RULES / home).rglob("*.py"))
    assert files, f"no rule set module {home}"
    for path in files:
        used = _rules_modules(path) - {home}
        assert used <= _RULE_SET_HOMES[home], (
            f"{path.relative_to(ROOT)} imports {sorted(used - _RULE_SET_HOMES[home])}"
        )


def test_the_shared_rules_modules_import_no_rule_set() -> None:
    for name in sorted(_SHARED_RULES):
        used = _rules_modules(RULES / f"{name}.py")
        assert used <= _SHARED_RULES, f"truc_rules/{name}.py imports {sorted(used - _SHARED_RULES)}"


def test_the_rules_library_uses_no_global_randomness_clock_or_io() -> None:
    forbidden_modules = {"time", "datetime", "os", "io", "socket", "pathlib", "secrets"}
    for path in RULES.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "random"
            ):
                assert node.attr == "Random", f"{path}: random.{node.attr}"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in ("open", "print", "input"), f"{path}: {node.func.id}()"
        names = imports(path.parent)[str(path.relative_to(ROOT))]
        assert not names & forbidden_modules, f"{path} imports {sorted(names & forbidden_modules)}"


def test_the_game_use_cases_import_neither_grpc_nor_redis() -> None:
    loaded = loaded_by(
        "truc_game.service",
        "truc_game.sessions",
        "truc_game.history",
        "truc_game.deadlines",
        "truc_game.ports",
        "truc_game.names",
        "truc_game.adapters.memory",
    )
    assert "grpc" not in loaded
    assert "redis" not in loaded
    assert "truc_redis" not in loaded


def test_the_game_api_imports_no_store() -> None:
    for path in sorted((GAME / "api").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                named = [module, *(f"{module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                named = [a.name for a in node.names]
            else:
                continue
            for name in named:
                assert "adapters" not in name, f"{path} imports {name}"
                assert name.split(".")[0] not in ("redis", "truc_redis"), f"{path} imports {name}"


def test_the_development_redis_is_imported_by_no_service_or_library() -> None:
    for package in ALLOWED:
        if package in (DEV_REDIS, CHAOS):
            continue
        for path, names in imports(package).items():
            assert "truc_dev_redis" not in names, f"{path} imports the development Redis"


def test_nothing_imports_the_chaos_suite() -> None:
    for package in ALLOWED:
        if package is CHAOS:
            continue
        for path, names in imports(package).items():
            assert "truc_chaos" not in names, f"{path} imports the chaos suite"
