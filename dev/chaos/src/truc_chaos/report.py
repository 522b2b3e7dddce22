"""The figures of a chaos run, as a table for people and a JSON report.

Figures: actions acknowledged, matches completed, tickets, faults injected by kind,
client drops by kind, acknowledged actions lost (only inside simulated crash
windows may there be any) and the loss window in ms (configured: the AOF tail
cut; measured: from the oldest lost acknowledgement to the kill), the largest
rewind a player saw (versions) and the largest gap in a watch, what the players
ran into (notes), and every violation, grouped by check.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .run import RunResult

__all__ = ["figures", "report_json", "table"]

SCHEMA = "truc-chaos/1"


def _watch_gap(result: RunResult) -> int:
    gap = 0
    for log in result.journal.watches.values():
        for epoch in log.epochs:
            previous = 0
            for seen in epoch:
                gap = max(gap, seen.version - previous - 1)
                previous = seen.version
    return gap


def figures(result: RunResult) -> dict[str, Any]:
    journal = result.journal
    lost = [e for e in result.excused if e.check == "lost-ack"]
    windows = [cut.window_ms for cut in journal.truncations]
    measured = 0.0
    for cut in journal.truncations:
        inside = [e.at for e in lost if cut.cut_to_at <= e.at <= cut.ends_at]
        if inside:
            measured = max(measured, (cut.killed_at - min(inside)) * 1000)
    rewinds = [r.from_version - r.to_version for w in journal.watches.values() for r in w.rewinds]
    ticket_states = Counter(t.state for t in result.store.tickets.values())
    return {
        "appendfsync": result.config.appendfsync,
        "players": result.config.grpc_players + result.config.rest_players,
        "players_signed_in": len(journal.players),
        "actions_acknowledged": len(journal.acks),
        "actions_by_transport": dict(Counter(a.via for a in journal.acks)),
        "matches_completed": len(journal.games_completed),
        "games_in_redis": len(result.store.games),
        "tickets": len(journal.tickets),
        "ticket_states_in_redis": dict(ticket_states),
        "faults": dict(Counter(f.kind for f in journal.faults)),
        "client_drops": dict(journal.drops),
        "lost_actions": len(lost),
        "watchers_kept_lost_versions": sum(
            1 for e in result.excused if e.check == "watch-kept-lost-versions"
        ),
        "loss_window_ms": round(max(windows), 1) if windows else 0.0,
        "loss_window_measured_ms": round(measured, 1),
        "truncated_bytes": sum(cut.dropped_bytes for cut in journal.truncations),
        "max_rewind_versions": max(rewinds, default=0),
        "max_watch_gap": _watch_gap(result),
        "watch_reconnects": sum(w.reconnects for w in journal.watches.values()),
        "notes": dict(Counter(n.kind for n in journal.notes)),
        "violations": len(result.violations),
        "violations_by_check": dict(Counter(v.check for v in result.violations)),
        "timings_s": {k: round(v, 1) for k, v in result.timings.items()},
    }


def table(result: RunResult) -> str:
    f = figures(result)
    rows: list[tuple[str, str]] = [
        ("appendfsync", f["appendfsync"]),
        ("players (signed in)", f"{f['players']} ({f['players_signed_in']})"),
        (
            "actions acknowledged",
            f"{f['actions_acknowledged']} "
            + " ".join(f"{k} {v}" for k, v in sorted(f["actions_by_transport"].items())),
        ),
        ("matches completed", str(f["matches_completed"])),
        ("games in Redis", str(f["games_in_redis"])),
        ("tickets", f"{f['tickets']} (in Redis: {_pairs(f['ticket_states_in_redis'])})"),
        ("faults injected", _pairs(f["faults"]) or "none"),
        ("client drops", _pairs(f["client_drops"]) or "none"),
        ("lost actions (crash window)", str(f["lost_actions"])),
        (
            "loss window ms",
            f"{f['loss_window_ms']:.0f} cut, {f['loss_window_measured_ms']:.0f} measured"
            if f["loss_window_ms"]
            else "-",
        ),
        ("truncated AOF bytes", str(f["truncated_bytes"])),
        ("watchers kept lost versions", str(f["watchers_kept_lost_versions"])),
        ("max rewind (versions)", str(f["max_rewind_versions"])),
        ("max watch gap", str(f["max_watch_gap"])),
        ("watch reconnects", str(f["watch_reconnects"])),
        ("player notes", _pairs(f["notes"]) or "none"),
        ("violations", f"{f['violations']} {_pairs(f['violations_by_check'])}".strip()),
        ("time s", _pairs(f["timings_s"])),
    ]
    width = max(len(k) for k, _ in rows)
    lines = [f"truc chaos ({f['appendfsync']})", "-" * (width + 40)]
    lines += [f"{k:<{width}}  {v}" for k, v in rows]
    unclean = {name: code for name, code in result.exit_codes.items() if code != 0}
    if unclean:
        lines += ["", f"exit statuses after SIGTERM that are not 0: {unclean}"]
    if result.harness:
        lines += ["", "harness problems:", *(f"  {h}" for h in result.harness)]
    if result.violations:
        lines += ["", "violations:"]
        lines += [f"  {v.line()}" for v in result.violations[:60]]
        if len(result.violations) > 60:
            lines.append(f"  ... and {len(result.violations) - 60} more (see the JSON report)")
    if result.excused:
        lines += ["", f"excused by simulated crashes ({len(result.excused)}):"]
        lines += [f"  [{e.check}] {e.subject}: {e.detail}" for e in result.excused[:10]]
    notes = [n for n in result.journal.notes if n.kind not in ("rewind",)]
    if notes:
        lines += ["", "what the players ran into (first 12):"]
        lines += [f"  {n.kind}: {n.player} {n.detail}" for n in notes[:12]]
    if result.work_dir:
        lines += ["", f"logs and Redis data kept in {result.work_dir}"]
    return "\n".join(lines)


def _pairs(mapping: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(mapping.items()))


def report_json(results: list[RunResult]) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "ok": all(r.ok for r in results),
        "runs": [
            {
                "config": {
                    "appendfsync": r.config.appendfsync,
                    "fault_seconds": r.config.fault_seconds,
                    "settle_seconds": r.config.settle_seconds,
                    "grpc_players": r.config.grpc_players,
                    "rest_players": r.config.rest_players,
                    "short": r.config.short,
                    "seed": r.config.seed,
                    "target_score": r.config.target_score,
                    "manches": r.config.manches,
                },
                "ok": r.ok,
                "figures": figures(r),
                "violations": [
                    {
                        "check": v.check,
                        "subject": v.subject,
                        "detail": v.detail,
                        "component": v.component,
                    }
                    for v in r.violations
                ],
                "excused": [
                    {"check": e.check, "subject": e.subject, "detail": e.detail} for e in r.excused
                ],
                "faults": [
                    {
                        "kind": f.kind,
                        "at_s": round(f.started - r.journal.started, 2),
                        "took_s": round(f.ended - f.started, 2),
                        "detail": f.detail,
                    }
                    for f in r.journal.faults
                ],
                "truncations": [
                    {
                        "file": c.file,
                        "window_ms": round(c.window_ms, 1),
                        "dropped_bytes": c.dropped_bytes,
                    }
                    for c in r.journal.truncations
                ],
                "notes": [
                    {
                        "at_s": round(n.at - r.journal.started, 2),
                        "player": n.player,
                        "kind": n.kind,
                        "detail": n.detail,
                    }
                    for n in r.journal.notes
                ],
                "health": r.health,
                "exit_codes": r.exit_codes,
                "harness": r.harness,
                "work_dir": r.work_dir,
            }
            for r in results
        ],
    }
