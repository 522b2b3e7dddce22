"""``truc load`` against a real stack (a game service and two lobbies on Redis):
a short run produces a sound JSON report; an unreachable address fails clearly.
And the latency histogram behind its percentiles."""

from __future__ import annotations

import json
import math
import random
import re
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.lobby_service.conftest import Stack, stack  # noqa: F401
from tests.service.conftest import redis_server  # noqa: F401
from truc_client.latency import LatencyHistogram
from truc_client.load import parse_args, summary_table
from truc_client.load_report import LoadReport, ReportError, read_report


def _truc_load(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``truc load ARGS`` as a process (through the ``truc`` command's subcommand)."""
    return subprocess.run(
        [sys.executable, "-m", "truc_client.cli", "load", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _short_run(
    services: Stack, path: Path, *extra: str, target_score: int = 5
) -> subprocess.CompletedProcess[str]:
    """A short run on the module's stack. Each test asks for its own
    ``target_score``: a run's players queue again after their match, and a
    ticket the run's end left behind may still be matched for the presence
    window (``TRUC_TICKET_PRESENCE_SECONDS``) after its process has gone; with
    other rule options it can never sit at the next run's tables (tickets only
    match the same options), where its seat would wait for the turn timer."""
    return _truc_load(
        "--lobby",
        services.lobbies[0].address,
        "--game",
        services.game.address,
        "--players",
        "12",
        "--games",
        "2",
        "--target-score",
        str(target_score),
        "--manches",
        "1",
        "--report",
        str(path),
        *extra,
    )


def _sound_report(done: subprocess.CompletedProcess[str], path: Path) -> LoadReport:
    """The run succeeded and its report is whole and consistent."""
    assert done.returncode == 0, done.stdout + done.stderr
    raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    report = read_report(path)  # the file follows the schema, field by field
    assert report.to_json() == raw  # and nothing in it is lost or added
    assert raw["schema"] == "truc-load/1"
    assert report.stopped_by == "games"
    assert report.config.players == 12
    assert report.games.completed >= 2
    assert report.actions.submitted > 0
    assert report.actions.per_second > 0
    assert report.tickets.created >= 12
    assert report.tickets.seated >= 12
    assert report.queue_to_seated_ms.count >= 12
    assert report.errors.fatal == 0, report.errors
    assert report.ok is True
    # No error on the way in. (At the stop a CancelTicket may race the matcher
    # and find its ticket matched already: that is the run ending, counted.)
    for method in ("SignInGuest", "CreateTicket", "WatchTicket", "GetGame"):
        assert report.rpcs[method].errors == {}, method
    assert "games completed" in done.stdout
    return report


def _timed(report: LoadReport, *methods: str) -> None:
    for method in methods:
        latency = report.rpcs[method].latency_ms
        assert latency.count > 0, method
        assert 0 < latency.p50 <= latency.p95 <= latency.p99 <= latency.max, method


def test_a_short_run_plays_whole_games_over_sessions_and_reports_them(
    stack: Stack,  # noqa: F811
    tmp_path: Path,
) -> None:
    path = tmp_path / "report.json"
    done = _short_run(stack, path)  # sessions are the default transport
    report = _sound_report(done, path)
    raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    assert report.config.transport == "session" and raw["config"]["transport"] == "session"
    rpcs = report.rpcs
    assert "SubmitAction" not in rpcs and "WatchGame" not in rpcs  # nothing unary in play
    _timed(report, "SessionAction", "Play", "CreateTicket")
    actions = rpcs["SessionAction"]
    assert actions.ok == report.actions.submitted
    assert actions.errors == {}
    assert "messages" not in raw["rpcs"]["SessionAction"]  # a count of streams only
    # One session per seat and match, each told of (nearly) every action.
    play = rpcs["Play"]
    assert play.calls >= 12 and play.errors == {}
    assert play.messages is not None
    assert play.latency_ms.count >= 3 * report.actions.submitted
    assert play.messages >= play.latency_ms.count
    assert "over Play sessions" in done.stdout and "SessionAction" in done.stdout


def test_a_short_run_over_unary_calls_reports_them(
    stack: Stack,  # noqa: F811
    tmp_path: Path,
) -> None:
    path = tmp_path / "report.json"
    done = _short_run(stack, path, "--transport", "unary", target_score=6)
    report = _sound_report(done, path)
    assert report.config.transport == "unary"
    rpcs = report.rpcs
    assert "Play" not in rpcs and "SessionAction" not in rpcs
    assert rpcs["SubmitAction"].errors == {}
    _timed(report, "SubmitAction", "WatchGame", "CreateTicket")
    assert rpcs["SubmitAction"].ok == report.actions.submitted
    # Six watchers see each action: nearly every version is timed six times.
    watch = rpcs["WatchGame"]
    assert watch.messages is not None
    assert watch.latency_ms.count >= 3 * report.actions.submitted
    assert watch.messages >= watch.latency_ms.count
    assert "over unary calls" in done.stdout and "SubmitAction" in done.stdout


def test_a_run_of_partnership_tables_seats_four_players_a_table(
    stack: Stack,  # noqa: F811
    tmp_path: Path,
) -> None:
    path = tmp_path / "report.json"
    done = _truc_load(
        "--lobby",
        stack.lobbies[0].address,
        "--game",
        stack.game.address,
        "--ruleset",
        "partnership_truc",
        "--players",
        "6",
        "--games",
        "2",
        "--target-score",
        "4",
        "--manches",
        "1",
        "--report",
        str(path),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "6 players rounded up to 8 (4 a table)" in done.stderr
    report = read_report(path)
    assert report.config.rule_set == "partnership_truc" and report.config.players == 8
    assert report.games.completed >= 2 and report.errors.fatal == 0
    assert report.tickets.seated >= 8


def test_the_transport_is_a_flag_and_sessions_are_the_default() -> None:
    assert parse_args(["--quiet"]).transport == "session"
    assert parse_args(["--transport", "unary", "--quiet"]).transport == "unary"
    with pytest.raises(SystemExit):
        parse_args(["--transport", "carrier-pigeon", "--quiet"])


def test_the_table_size_follows_the_rule_set() -> None:
    assert parse_args(["--ruleset", "french_truc", "--players", "5", "--quiet"]).players == 6
    catalan = parse_args(["--ruleset", "catalan_truc", "--seats", "2", "--players", "3", "--quiet"])
    assert catalan.players == 4 and catalan.seats == 2
    assert parse_args(["--players", "7", "--quiet"]).players == 12  # truc_y_flou: six a table


def test_an_unreachable_service_is_a_clear_error() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    done = _truc_load(
        "--lobby",
        f"127.0.0.1:{port}",
        "--game",
        f"127.0.0.1:{port}",
        "--connect-timeout",
        "1",
        "--duration",
        "5",
        timeout=30,
    )
    assert done.returncode == 2
    assert f"cannot reach the lobby at 127.0.0.1:{port}" in done.stderr
    assert "Traceback" not in done.stderr


def test_players_are_rounded_up_to_whole_tables_and_a_default_duration_applies() -> None:
    config = parse_args(["--players", "13", "--quiet"])
    assert config.players == 18
    assert config.duration_s == 30.0
    assert config.games is None
    config = parse_args(["--games", "3", "--quiet"])
    assert config.duration_s is None
    with pytest.raises(SystemExit):
        parse_args(["--lobby", "nohostport"])


# --------------------------------------------------------------------------- histogram


def _nearest_rank(samples: list[int], q: float) -> float:
    ordered = sorted(samples)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1] / 1e6


def test_percentiles_are_within_one_percent_of_the_exact_ones() -> None:
    rng = random.Random(5)
    samples = [int(rng.lognormvariate(15, 1.2)) for _ in range(20_000)]  # ~3 ms, long tail
    histogram = LatencyHistogram()
    for ns in samples:
        histogram.record(ns)
    for q in (1, 25, 50, 90, 95, 99, 99.9, 100):
        exact = _nearest_rank(samples, q)
        assert histogram.percentile(q) == pytest.approx(exact, rel=0.0101), q
    assert histogram.count == len(samples)
    assert histogram.max_ns == max(samples)
    assert histogram.percentile(100) <= max(samples) / 1e6


def test_percentiles_never_decrease_and_never_pass_the_extremes() -> None:
    histogram = LatencyHistogram()
    for ns in (5_000_000, 1_000_000, 1_000_000, 2_000_000, 90_000_000):
        histogram.record(ns)
    summary = histogram.summary()
    assert summary["count"] == 5
    assert 1.0 <= summary["p50"] <= summary["p95"] <= summary["p99"] <= summary["max"] == 90.0
    assert summary["p50"] == pytest.approx(2.0, rel=0.01)
    assert summary["mean"] == pytest.approx(19.8)
    one = LatencyHistogram()
    one.record(1_234_567)
    assert one.percentile(1) == one.percentile(99) == pytest.approx(1.234567)


def test_an_empty_histogram_and_merging() -> None:
    empty = LatencyHistogram()
    assert empty.summary() == {"count": 0, "p50": 0, "p95": 0, "p99": 0, "max": 0, "mean": 0}
    with pytest.raises(ValueError, match="percentile"):
        empty.percentile(0)
    low, high = LatencyHistogram(), LatencyHistogram()
    for ns in range(1, 101):
        low.record(ns * 1_000)
        high.record(ns * 1_000_000)
    low.merge(high)
    low.merge(empty)
    assert low.count == 200
    assert low.min_ns == 1_000
    assert low.max_ns == 100_000_000
    assert low.percentile(50) == pytest.approx(0.1, rel=0.01)
    assert low.percentile(75) == pytest.approx(50.0, rel=0.01)
    zero = LatencyHistogram()
    zero.record(0)
    zero.record(-5)
    assert zero.percentile(50) == 0.0


def _report(entry: dict[str, Any]) -> dict[str, Any]:
    """A whole report (as JSON values) with one RPC method."""
    histogram = LatencyHistogram()
    histogram.record(2_000_000)
    return {
        "schema": "truc-load/1",
        "config": {
            "lobby": "127.0.0.1:50052",
            "game": "127.0.0.1:50051",
            "players": 6,
            "duration_s": None,
            "games": 1,
            "seed": 1,
            "response_view": "minimal",
            "target_score": 0,
            "manches": 0,
            "think_s": 0.0,
            "channels": 1,
            "event_loop": "asyncio",
        },
        "stopped_by": "games",
        "elapsed_s": 1.5,
        "games": {"completed": 1, "abandoned": 0},
        "actions": {"submitted": 1, "per_second": 0.7},
        "tickets": {"created": 6, "seated": 6, "per_second": 4.0},
        "queue_to_seated_ms": histogram.summary(),
        "rpcs": {"SubmitAction": entry},
        "errors": {"total": 2, "fatal": 1, "fatal_examples": ["BotError: stuck"]},
        "cpu": {"load_process_s": 0.2, "load_process_percent": 13.0},
        "ok": False,
    }


def _entry() -> dict[str, Any]:
    histogram = LatencyHistogram()
    histogram.record(2_000_000)
    return {
        "calls": 3,
        "ok": 1,
        "latency_ms": histogram.summary(),
        "errors": {"ABORTED/STALE_ETAG": 2},
    }


def test_the_summary_table_lists_every_method_and_error() -> None:
    table = summary_table(_report(_entry()))
    assert "SubmitAction" in table
    assert "SubmitAction ABORTED/STALE_ETAG: 2" in table
    assert "fatal errors: 1" in table and "BotError: stuck" in table
    assert summary_table(LoadReport.parse(_report(_entry()))) == table


def test_a_report_reads_back_as_it_was_written(tmp_path: Path) -> None:
    raw = _report(_entry())
    path = tmp_path / "report.json"
    path.write_text(json.dumps(raw, indent=2) + "\n", encoding="utf-8")
    report = read_report(path)
    assert json.dumps(report.to_json(), indent=2) == json.dumps(raw, indent=2)
    assert report.rpcs["SubmitAction"].messages is None


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda r: r.pop("schema"), "schema: missing"),
        (lambda r: r.update(schema="truc-load/2"), "schema: "),
        (lambda r: r["config"].update(players="6"), 'config.players: must be an integer, not "6"'),
        (
            lambda r: r["rpcs"]["SubmitAction"]["latency_ms"].pop("p99"),
            "rpcs.SubmitAction.latency_ms.p99: missing",
        ),
        (
            lambda r: r["rpcs"]["SubmitAction"]["errors"].update(x=1.5),
            "rpcs.SubmitAction.errors.x: ",
        ),
        (lambda r: r["games"].update(extra=1), "games.extra: unknown field"),
        (lambda r: r.update(stopped_by="tired"), "stopped_by: "),
    ],
)
def test_a_malformed_report_is_an_error_naming_the_field(
    tmp_path: Path, change: Callable[[dict[str, Any]], object], field: str
) -> None:
    raw = _report(_entry())
    change(raw)
    path = tmp_path / "report.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(ReportError) as caught:
        read_report(path)
    assert str(caught.value).startswith(field), str(caught.value)
    with pytest.raises(ReportError, match=re.escape(field)):
        summary_table(raw)


def test_a_report_file_that_is_not_json_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text('{"schema": ', encoding="utf-8")
    with pytest.raises(ReportError, match="JSON"):
        read_report(path)
