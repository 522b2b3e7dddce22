"""The JSON report of ``truc load`` (``"schema": "truc-load/1"``) as pydantic models.

:class:`LoadReport` is the one description of the report: :mod:`truc_client.load`
builds it and writes :meth:`LoadReport.to_json`; :func:`read_report` reads a
report file back, and a malformed one is a :class:`ReportError` naming the
field (``rpcs.SubmitAction.latency_ms.p99: missing (required)``). The fields,
in the order they are written, are those of the schema in the module
docstring of :mod:`truc_client.load`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr
from pydantic import ValidationError as _ValidationError

from .validation import describe

__all__ = [
    "SCHEMA",
    "LoadReport",
    "ReportError",
    "read_report",
]

SCHEMA: Literal["truc-load/1"] = "truc-load/1"

Number = StrictInt | StrictFloat
"""A JSON number, kept as written (an integer stays one)."""


class ReportError(ValueError):
    """A load report that does not follow the schema; names the field at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RunConfig(_Part):
    """``config``: what the run was asked to do (its flags) and the event loop it ran on."""

    lobby: StrictStr
    game: StrictStr
    players: StrictInt
    duration_s: Number | None
    games: StrictInt | None
    seed: StrictInt
    response_view: Literal["minimal", "full"]
    target_score: StrictInt
    manches: StrictInt
    rule_set: StrictStr = "truc_y_flou"
    """The game the tables played (reports written before the other rule sets: Truc y Flou)."""
    seats: StrictInt = 0
    think_s: Number
    channels: StrictInt
    transport: Literal["session", "unary"] = "unary"
    """How the players reached the game service: Play sessions, or WatchGame +
    SubmitAction (reports written before sessions: unary)."""
    event_loop: StrictStr


class Games(_Part):
    completed: StrictInt
    abandoned: StrictInt


class Actions(_Part):
    submitted: StrictInt
    per_second: Number


class Tickets(_Part):
    created: StrictInt
    seated: StrictInt
    per_second: Number


class Latency(_Part):
    """A latency summary in ms (:meth:`truc_client.latency.LatencyHistogram.summary`)."""

    count: StrictInt
    p50: Number
    p95: Number
    p99: Number
    max: Number
    mean: Number


class MethodReport(_Part):
    """One RPC method: calls, successes, latencies, errors by ``CODE/REASON``.

    ``messages`` (messages received) only for a streaming method.
    """

    calls: StrictInt
    ok: StrictInt
    messages: StrictInt | None = None
    latency_ms: Latency
    errors: dict[str, StrictInt]


class Errors(_Part):
    total: StrictInt
    fatal: StrictInt
    fatal_examples: list[StrictStr]


class Cpu(_Part):
    load_process_s: Number
    load_process_percent: Number


class LoadReport(_Part):
    """The whole report."""

    model_config = ConfigDict(populate_by_name=True)

    schema_: Literal["truc-load/1"] = Field(alias="schema")
    config: RunConfig
    stopped_by: Literal["duration", "games", "interrupted"]
    elapsed_s: Number
    games: Games
    actions: Actions
    tickets: Tickets
    queue_to_seated_ms: Latency
    rpcs: dict[str, MethodReport]
    errors: Errors
    cpu: Cpu
    ok: StrictBool

    @classmethod
    def parse(cls, data: object) -> LoadReport:
        """Validate a report (parsed JSON); ReportError naming the field."""
        try:
            return cls.model_validate(data)
        except _ValidationError as exc:
            raise ReportError(*describe(exc)) from None

    def to_json(self) -> dict[str, Any]:
        """The report as JSON values, in the schema's order (``messages`` only for streams)."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


def read_report(path: str | Path) -> LoadReport:
    """A report file; OSError if it cannot be read, ReportError if it is malformed."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        return LoadReport.model_validate_json(text)
    except _ValidationError as exc:
        raise ReportError(*describe(exc)) from None
