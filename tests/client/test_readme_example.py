"""The usage example of clients/python/README.md runs against a real stack."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.lobby_service.conftest import Stack, stack  # noqa: F401
from tests.service.conftest import redis_server  # noqa: F401

README = Path(__file__).resolve().parents[2] / "clients/python/README.md"


def example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) == 1, "the README has one python example"
    code: str = blocks[0]
    assert '"localhost:50052", "localhost:50051"' in code
    return code


def test_the_readme_example_plays_a_match(
    stack: Stack,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = example().replace(
        '"localhost:50052", "localhost:50051"',
        f'"{stack.lobbies[0].address}", "{stack.game.address}"',
    )
    exec(compile(code, str(README), "exec"), {"__name__": "readme_example"})
    out = capsys.readouterr().out.splitlines()
    assert len(out) > 10
    assert re.fullmatch(r"TEAM_[AB] wins after \d+ hands", out[-1]), out[-1]
