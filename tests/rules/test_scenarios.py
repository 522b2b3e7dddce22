"""Every scenario file of the project (public copies and one or more per rule) holds,
the ``truc scenario`` command reports results and failures as scenarios.md says, and
a malformed file is refused with an error that names the field at fault."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from truc_client.cli import main
from truc_client.scenarios import ExpectFile, parse_action, parse_scenario, run_scenario
from truc_rules import Call, Card, MakeCall, PlayCard, Reason, RuleOptions
from truc_rules.scenario import (
    RESULT_FIELDS,
    Scenario,
    ScenarioAction,
    ScenarioError,
    ScenarioSetup,
)
from truc_rules.scenario import run_scenario as run_typed

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
FILES = sorted(SCENARIOS.glob("*/*.json"))


def test_there_are_public_scenarios_and_many_rule_scenarios() -> None:
    assert len(list((SCENARIOS / "public").glob("*.json"))) == 7
    assert len(list((SCENARIOS / "public_variants").glob("*.json"))) == 4
    assert len(list((SCENARIOS / "rules").glob("*.json"))) >= 40


@pytest.mark.parametrize(
    "rule_set", ["french_truc", "sackson_truc", "partnership_truc", "catalan_truc"]
)
def test_every_rule_set_has_its_own_scenarios_named_after_their_rules(rule_set: str) -> None:
    files = sorted((SCENARIOS / rule_set).glob("*.json"))
    assert len(files) >= 25
    for path in files:
        doc = json.loads(path.read_text(encoding="utf-8"))
        assert doc["ruleset"] == rule_set, path.name
        assert doc["name"].startswith(f"{rule_set} V"), path.name
        assert path.name.startswith("v"), path.name


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


def _mutated(tmp_path: Path, mutation: object) -> Path:
    doc = json.loads((SCENARIOS / "public" / "truc-refused.json").read_text())
    mutation(doc)  # type: ignore[operator]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(
    ("mutation", "field"),
    [
        (lambda d: d.update(name=3), "name: must be a string, not 3"),
        (lambda d: d.pop("deals"), "deals: missing"),
        (lambda d: d["deals"][0].pop(), "deals[0]: a deal is 6 hands"),
        (lambda d: d["deals"][0][2].pop(), "deals[0][2]: a hand is 3 cards"),
        (lambda d: d["deals"][0][0].__setitem__(1, 7), "deals[0][0][1]: a card is written"),
        (lambda d: d["deals"][0][1].__setitem__(0, "2Co"), "deals[0]: a deal holds a card twice"),
        (lambda d: d.pop("start"), "start: give the first dealer"),
        (lambda d: d["start"].update(dealer=7), "start.dealer: dealer must be a seat 0-5"),
        (lambda d: d["start"].update(dealer="1"), 'start.dealer: must be an integer, not "1"'),
        (lambda d: d["start"].update(scores=[30, 0]), "start.scores: scores must be two numbers"),
        (lambda d: d["start"].update(scores=[1, 2, 3]), "start.scores: must hold 2 items, not 3"),
        (lambda d: d["start"].update(manches=[0, True]), "start.manches[1]: must be an integer"),
        (
            lambda d: (d["start"].pop("dealer"), d["start"].update(draw=[["4Cu", "4Sw"]])),
            "start.draw: every draw but the last must be a tie",
        ),
        (
            lambda d: d.update(options={"ace_value": 2}),
            "options.ace_value: ace_value must be 0 or 1",
        ),
        (lambda d: d.update(options={"colour": "red"}), "options.colour: unknown rule option"),
        (
            lambda d: d["actions"][1].update(seat=True),
            "actions[1].seat: must be an integer, not true",
        ),
        (lambda d: d["actions"][0].pop("seat"), "actions[0].seat: missing"),
        (lambda d: d["actions"][1].update(play="2Co"), "actions[1]: give exactly one of play"),
        (lambda d: d["actions"].append({"seat": 0}), "actions[2]: give exactly one of play"),
        (lambda d: d["actions"][0].update(call="TRUCO"), 'actions[0].call: "TRUCO" is not a call'),
        (lambda d: d["actions"][0].update(rejected="NOPE"), "actions[0].rejected: "),
        (lambda d: d["actions"].append("0:TRUC"), "actions[2]: must be an object"),
        (lambda d: d.update(actions=None), "actions: must be a list, not null"),
        (lambda d: d["expect"].update(score=[1, 2]), "expect.score: not a result field"),
        (
            lambda d: d["expect"].update(scores="11-10"),
            'expect.scores: must be a list, not "11-10"',
        ),
        (
            lambda d: d["expect"].update(history=[{"winner": "C", "scores": [25, 3]}]),
            "expect.history[0].winner: ",
        ),
    ],
)
def test_a_malformed_scenario_names_the_field_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mutation: object, field: str
) -> None:
    path = _mutated(tmp_path, mutation)
    assert main(["scenario", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"ERROR {path}: malformed scenario: {field}"), captured.err


def test_several_faults_are_named_together() -> None:
    doc = json.loads((SCENARIOS / "public" / "truc-refused.json").read_text())
    doc["deals"][0][0][0] = "9Sw"
    doc["actions"][1]["seat"] = "3"
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(doc)
    assert caught.value.field == "deals[0][0][0]"
    assert "; actions[1].seat: must be an integer" in str(caught.value)


def test_unknown_keys_are_ignored_where_the_format_allows_comments() -> None:
    doc = json.loads((SCENARIOS / "public" / "truc-refused.json").read_text())
    plain = run_scenario(doc)
    doc["comment"] = "why this scenario exists"
    doc["start"]["note"] = "-"
    doc["actions"][0]["why"] = "a bluff"
    assert run_scenario(doc) == plain
    assert parse_action({"seat": 3, "call": "FOLD", "why": "-"}, 1).action == MakeCall(Call.FOLD)
    with pytest.raises(ScenarioError, match=r"^actions\[4\]\.seat: missing"):
        parse_action({"call": "FOLD"}, 4)


def test_expect_names_exactly_the_result_fields() -> None:
    assert tuple(ExpectFile.model_fields) == RESULT_FIELDS


def test_the_runner_core_plays_a_typed_scenario() -> None:
    """truc_rules.scenario needs no JSON: the same run from dataclasses."""
    doc = json.loads((SCENARIOS / "public" / "truc-refused.json").read_text())
    deal = tuple(tuple(Card.parse(c) for c in hand) for hand in doc["deals"][0])
    scenario = Scenario(
        name=doc["name"],
        setup=ScenarioSetup(options=RuleOptions(), deals=(deal,), dealer=5, scores=(10, 10)),
        actions=(
            ScenarioAction(0, MakeCall(Call.TRUC)),
            ScenarioAction(3, MakeCall(Call.FOLD)),
            ScenarioAction(0, PlayCard(Card.parse("2Co")), Reason.NOT_YOUR_TURN),
        ),
        expect=(("scores", [11, 10]), ("hands_played", 1)),
    )
    run = run_typed(scenario)
    assert run.problems == ()
    assert run.result.to_json()["rejected"] == [{"index": 2, "reason": "NOT_YOUR_TURN"}]
    from_json = run_scenario(doc).result
    assert (run.result.scores, run.result.hands_played) == (
        from_json.scores,
        from_json.hands_played,
    )
    assert parse_scenario(doc).setup == scenario.setup
    with pytest.raises(ScenarioError, match=r"^expect\.score: not a result field"):
        Scenario(name="", setup=scenario.setup, expect=(("score", [0, 0]),))


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d.update(ruleset="tute"), "ruleset"),
        (lambda d: d["options"].update(seats=3), "options.seats"),
        (lambda d: d["options"].update(ace_value=1), "options.ace_value"),
        (lambda d: d["deals"][0].pop(), "deals[0]"),
        (lambda d: d["deals"][0][0].__setitem__(0, "9Sw"), "deals[0][0][0]"),
        (lambda d: d["start"].update(draw=[["3Sw", "2Co"]]), "start.draw"),
    ],
)
def test_a_malformed_variant_scenario_names_its_field(change: Any, field: str) -> None:
    doc: dict[str, Any] = {
        "ruleset": "catalan_truc",
        "options": {"seats": 4},
        "start": {"dealer": 3},
        "deals": [
            [
                ["3Sw", "4Co", "KCu"],
                ["2Co", "5Cl", "JSw"],
                ["1Co", "6Cu", "NSw"],
                ["7Cl", "4Sw", "5Cu"],
            ]
        ],
    }
    assert run_scenario(doc).problems == ()
    change(doc)
    with pytest.raises(ScenarioError) as caught:
        run_scenario(doc)
    assert caught.value.field == field, str(caught.value)


def test_a_variant_scenario_without_a_dealer_starts_with_seat_0_dealing() -> None:
    doc = {
        "ruleset": "french_truc",
        "deals": [[["9He", "TSp", "JDi"], ["7Cl", "8He", "ASp"]]],
        "actions": [
            {"seat": 0, "play": "9He", "rejected": "NOT_YOUR_TURN"},
            {"seat": 1, "play": "7Cl"},
        ],
        "expect": {"to_act": 0},
    }
    run = run_scenario(doc)
    assert run.problems == (), run.problems
