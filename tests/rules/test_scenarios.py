"""Every scenario file of the project (public copies and one or more per rule) holds,
and the ``truc scenario`` command reports results and failures as scenarios.md says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from truc_game.cli import main
from truc_game.scenarios import run_scenario

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
FILES = sorted(SCENARIOS.glob("*/*.json"))


def test_there_are_public_scenarios_and_many_rule_scenarios() -> None:
    assert len(list((SCENARIOS / "public").glob("*.json"))) == 7
    assert len(list((SCENARIOS / "rules").glob("*.json"))) >= 40


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_scenario_holds(path: Path) -> None:
    run = run_scenario(json.loads(path.read_text(encoding="utf-8")))
    assert not run.problems, "\n".join(run.problems)


def test_cli_prints_one_json_line_per_scenario(
    capsys: pytest.CaptureFixture[str],
) -> None:
    paths = [str(p) for p in FILES[:3]]
    assert main(["scenario", *paths]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    result = json.loads(lines[0])
    assert set(result) == {
        "name",
        "scores",
        "manches",
        "history",
        "hands_played",
        "to_act",
        "finished",
        "winner",
        "rejected",
    }


def test_cli_exits_non_zero_and_explains_a_failed_expectation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads((SCENARIOS / "public" / "truc-refused.json").read_text())
    doc["expect"]["scores"] = [12, 10]
    doc["actions"].append({"seat": 0, "play": "2Co", "rejected": "NOT_YOUR_TURN"})
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(doc))
    assert main(["scenario", str(path)]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["scores"] == [11, 10]
    assert "scores: expected [12, 10], got [11, 10]" in captured.err
    # The appended action is refused NOT_YOUR_TURN (no deal left), as marked: no complaint.
    assert "actions[2]" not in captured.err


def test_cli_reports_an_action_marked_rejected_that_was_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads((SCENARIOS / "public" / "truc-refused.json").read_text())
    doc["actions"][0]["rejected"] = "NOT_ALLOWED_NOW"
    del doc["expect"]
    path = tmp_path / "accepted.json"
    path.write_text(json.dumps(doc))
    assert main(["scenario", str(path)]) == 1
    assert "actions[0] (seat 0 call TRUC) was accepted" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("mutation", "message"),
    [
        (lambda d: d["deals"][0][0].__setitem__(0, "9Sw"), "not a card"),
        (lambda d: d["actions"][0].update(call="TRUCO"), "TRUCO"),
        (lambda d: d.update(options={"ace_value": 2}), "ace_value"),
        (lambda d: d.update(options={"colour": "red"}), "unknown rule option"),
        (lambda d: d["deals"][0][1].__setitem__(0, "2Co"), "twice"),
    ],
)
def test_cli_refuses_malformed_scenarios_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mutation: object, message: str
) -> None:
    doc = json.loads((SCENARIOS / "public" / "truc-refused.json").read_text())
    mutation(doc)  # type: ignore[operator]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    assert main(["scenario", str(path)]) == 2
    assert message in capsys.readouterr().err
