"""``python -m truc_chaos``: the chaos suite (``make chaos``), and ``... soak`` (``make soak``).

    python -m truc_chaos [--minutes 3] [--modes always,everysec] [--short]
                         [--grpc-players 12] [--rest-players 6] [--report PATH]
    python -m truc_chaos soak [--minutes 30] [--report PATH]

Exit status: 0 when every run found no violation, 1 otherwise, 2 on bad arguments,
130 when interrupted (SIGINT or SIGTERM: every process started is stopped first).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from .run import RunConfig, RunResult, chaos_run

__all__ = ["main"]


def _positive(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, not {text!r}")
    return value


def _modes(text: str) -> list[str]:
    modes = [m.strip() for m in text.split(",") if m.strip()]
    for mode in modes:
        if mode not in ("always", "everysec"):
            raise argparse.ArgumentTypeError(f"appendfsync mode always or everysec, not {mode!r}")
    return modes


def _chaos_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m truc_chaos",
        description="Real processes, scripted players, scheduled faults, invariant checks.",
    )
    parser.add_argument(
        "--minutes", type=_positive, default=3.0, help="fault phase per mode (default 3)"
    )
    parser.add_argument("--modes", type=_modes, default=["always", "everysec"])
    parser.add_argument(
        "--short", action="store_true", help="the short schedule of make test (each fault once)"
    )
    parser.add_argument("--settle", type=_positive, default=None, metavar="SECONDS")
    parser.add_argument("--grpc-players", type=int, default=12)
    parser.add_argument("--rest-players", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--report", type=Path, metavar="PATH", help="write the JSON report")
    parser.add_argument("--keep", action="store_true", help="keep logs and Redis data")
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        type=_assignment,
        metavar="NAME=VALUE",
        help="an extra environment variable of every service (repeatable), e.g. "
        "PYTHONPATH=/elsewhere/services/lobby/src to try another lobby",
    )
    return parser


def _assignment(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, not {text!r}")
    return name, value


async def _chaos(args: argparse.Namespace) -> list[RunResult]:
    from .report import table  # noqa: PLC0415

    results = []
    for mode in args.modes:
        config = RunConfig(
            appendfsync=mode,
            fault_seconds=args.minutes * 60,
            settle_seconds=args.settle or (40.0 if args.short else 60.0),
            grpc_players=args.grpc_players,
            rest_players=args.rest_players,
            seed=args.seed,
            short=args.short,
            keep=args.keep,
            env=dict(args.env),
        )
        length = "the short schedule" if args.short else f"{config.fault_seconds:.0f} s"
        print(f"truc chaos: appendfsync {mode}, faults for {length}", flush=True)
        result = await chaos_run(config)
        print(table(result), flush=True)
        print(flush=True)
        results.append(result)
    return results


def _interrupt_on_signals() -> None:
    """SIGTERM (and SIGINT, even where a shell started us ignoring it) stop the run the
    way Ctrl-C does: every process it started is stopped on the way out."""

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    _interrupt_on_signals()
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("truc chaos: interrupted (every process it started is stopped)", file=sys.stderr)
        return 130


def _main(argv: list[str]) -> int:
    if argv[:1] == ["soak"]:
        from .soak import main as soak_main  # noqa: PLC0415

        return soak_main(argv[1:])
    args = _chaos_parser().parse_args(argv)
    from .report import report_json  # noqa: PLC0415

    results = asyncio.run(_chaos(args))
    report = report_json(results)
    if args.report is not None:
        args.report.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    for result in results:
        verdict = "PASS" if result.ok else f"FAIL ({len(result.violations)} violations)"
        print(f"truc chaos {result.config.appendfsync}: {verdict}")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
