"""The Dockerfiles, checked offline (no Docker engine here): multi-stage on a
pinned slim Python 3.11, every COPY source in the build context that
.dockerignore lets through, installs with the pinned constraints from wheels,
non-root numeric user, listening on all interfaces, a HEALTHCHECK through the
probe (gRPC health through ``truc_service.probe`` for the game service and the
lobby, HTTP ``/healthz`` through ``truc_gateway.probe`` for the gateway), the
service's own console script. The wheels the
build stage makes are built here too, and hold the probe modules."""

from __future__ import annotations

import fnmatch
import re
import shlex
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, slots=True)
class Image:
    folder: str
    package: str
    env_prefix: str
    port: int
    metrics_port: int | None
    """TRUC_METRICS_PORT; None: the process serves no metrics."""


IMAGES = (
    Image("game", "truc_game", "TRUC_GAME", 50051, 9464),
    Image("lobby", "truc_lobby", "TRUC_LOBBY", 50052, 9465),
    Image("gateway", "truc_gateway", "TRUC_GATEWAY", 8080, 9466),
)


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(KEYWORD, arguments) per instruction, continuation lines joined, comments dropped."""
    found: list[tuple[str, str]] = []
    pending = ""
    for line in dockerfile.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("#") or not line.strip():
            continue
        pending += line.rstrip()
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        keyword, _, rest = pending.strip().partition(" ")
        found.append((keyword.upper(), " ".join(rest.split())))
        pending = ""
    assert not pending, f"{dockerfile} ends inside a continued line"
    return found


def stages(dockerfile: Path) -> list[list[tuple[str, str]]]:
    """The instructions of each build stage, FROM first."""
    result: list[list[tuple[str, str]]] = []
    for keyword, rest in instructions(dockerfile):
        if keyword == "FROM":
            result.append([])
        assert result, "an instruction before the first FROM"
        result[-1].append((keyword, rest))
    return result


def in_context(path: str) -> bool:
    """Whether .dockerignore lets ``path`` (relative to the root) into the build
    context: the last pattern matching the path or one of its parent folders wins."""
    included = True
    for raw in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines():
        pattern = raw.strip()
        if not pattern or pattern.startswith("#"):
            continue
        negated = pattern.startswith("!")
        pattern = pattern.lstrip("!").rstrip("/")
        parts = path.split("/")
        candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        if any(fnmatch.fnmatchcase(c, pattern) for c in candidates):
            included = negated
    return included


def tracked(folder: str) -> list[str]:
    listing = subprocess.run(
        ["git", "ls-files", folder], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return listing.stdout.split()


def first_party_closure(folder: str) -> set[str]:
    """``folder`` and the folders of every package of this repository it depends on."""
    projects = {
        tomllib.loads(path.read_text())["project"]["name"]: str(path.parent.relative_to(ROOT))
        for path in ROOT.glob("*/*/pyproject.toml")
    }
    found, todo = set(), [folder]
    while todo:
        current = todo.pop()
        if current in found:
            continue
        found.add(current)
        project = tomllib.loads((ROOT / current / "pyproject.toml").read_text())["project"]
        for requirement in project.get("dependencies", []):
            name = re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0]
            if name in projects:
                todo.append(projects[name])
    return found


@pytest.mark.parametrize("image", IMAGES, ids=lambda i: i.folder)
def test_the_dockerfile_builds_from_the_root_context(image: Image) -> None:
    dockerfile = ROOT / "services" / image.folder / "Dockerfile"
    built = stages(dockerfile)
    assert len(built) >= 2, "multi-stage: build, then a runtime stage"
    for stage in built:
        base = stage[0][1].split()[0]
        assert re.fullmatch(r"python:3\.11\.\d+-slim(-[a-z]+)?", base), f"unpinned base {base}"
    copies = [rest.split() for stage in built for keyword, rest in stage if keyword == "COPY"]
    sources = [c[:-1] for c in copies if not c[0].startswith("--from=")]
    for source in (s for group in sources for s in group):
        assert (ROOT / source).exists(), f"COPY {source}: no such file"
        assert in_context(source.rstrip("/") + "/pyproject.toml") or in_context(source), source
    copied = {s.rstrip("/") for group in sources for s in group}
    # The service and every package of this repository it needs (not on PyPI).
    folders = first_party_closure(f"services/{image.folder}")
    assert {"libs/rules", "libs/protocol", f"services/{image.folder}"} <= folders
    # Servers carry neither the client (terminal play, rich, the load generator)
    # nor the development Redis.
    assert "clients/python" not in folders and "dev/redis" not in folders, folders
    assert {"constraints.txt", *folders} <= copied
    for folder in folders:
        needed = [f for f in tracked(folder) if f.endswith("pyproject.toml") or "/src/" in f]
        assert needed and all(in_context(f) for f in needed), folder
    assert not in_context(".venv/bin/python") and not in_context(".git/HEAD")
    runs = " && ".join(rest for stage in built for keyword, rest in stage if keyword == "RUN")
    assert "-c constraints.txt" in runs and "--no-deps" in runs and "wheel" in runs
    wheel_command = runs.split("wheel", 1)[1].split("&&")[0].split()
    assert folders <= set(wheel_command), f"wheels missing: {folders - set(wheel_command)}"
    assert "-e " not in runs, "the images install wheels, not editable sources"


@pytest.mark.parametrize("image", IMAGES, ids=lambda i: i.folder)
def test_the_runtime_stage_is_non_root_healthchecked_and_runs_the_service(image: Image) -> None:
    runtime = stages(ROOT / "services" / image.folder / "Dockerfile")[-1]
    by_keyword: dict[str, list[str]] = {}
    for keyword, rest in runtime:
        by_keyword.setdefault(keyword, []).append(rest)
    assert all(c.startswith("--from=") for c in by_keyword.get("COPY", [])), "runtime copies"
    user = by_keyword["USER"][-1].split(":")
    assert all(part.isdigit() and int(part) > 0 for part in user), f"USER {user}"
    env = dict(pair.split("=", 1) for rest in by_keyword["ENV"] for pair in shlex.split(rest))
    assert env[f"{image.env_prefix}_HOST"] == "0.0.0.0"
    assert env[f"{image.env_prefix}_PORT"] == str(image.port)
    ports = {str(image.port)}
    if image.metrics_port is None:
        assert "TRUC_METRICS_PORT" not in env
    else:
        assert env["TRUC_METRICS_PORT"] == str(image.metrics_port)
        ports.add(str(image.metrics_port))
    assert set(" ".join(by_keyword["EXPOSE"]).split()) == ports
    (healthcheck,) = by_keyword["HEALTHCHECK"]
    # gRPC health through the kit's probe; the gateway's own HTTP /healthz probe.
    module = "truc_gateway.probe" if image.folder == "gateway" else "truc_service.probe"
    probe = f'python -m {module} "127.0.0.1:${{{image.env_prefix}_PORT}}"'
    assert healthcheck.endswith("CMD " + probe), healthcheck
    project = tomllib.loads((ROOT / "services" / image.folder / "pyproject.toml").read_text())
    (command,) = by_keyword["CMD"]
    (script,) = re.fullmatch(r'\["([^"]+)"\]', command).groups()  # type: ignore[union-attr]
    assert project["project"]["scripts"][script] == f"{image.package}.server:main"


def test_the_wheels_of_the_build_stage_hold_the_probes(tmp_path: Path) -> None:
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet", "wheel"]
    packages = ["libs/protocol", "libs/service", *(f"services/{image.folder}" for image in IMAGES)]
    subprocess.run(
        [*pip, "--no-deps", "--no-build-isolation", "-w", str(tmp_path), *packages],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    names = {
        wheel.name.split("-")[0]: set(zipfile.ZipFile(wheel).namelist())
        for wheel in tmp_path.glob("*.whl")
    }
    assert "truc_service/probe.py" in names["truc_service"]
    assert "truc/v1/game_service_pb2.py" in names["truc_protocol"]
    assert "truc_gateway/probe.py" in names["truc_gateway"]
    # The development Redis launcher is in no production wheel.
    assert not any(n.startswith("truc_dev_redis") for wheel in names.values() for n in wheel)
    # The gateway serves its OpenAPI document from the package's resources.
    assert "truc_gateway/openapi.json" in names["truc_gateway"]
