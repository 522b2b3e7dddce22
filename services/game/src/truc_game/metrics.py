"""The game service's Prometheus series (the RPC and store series are
:mod:`truc_telemetry.metrics`'). Counters are per replica: sum them across
replicas (``sum(rate(truc_actions_total[5m]))``). ``truc_games_active`` is read
from Redis, so every replica reports the same count: take ``max()``.

* ``truc_actions_total{kind,origin}``: actions applied; kind ``play``, ``call``,
  ``signal``, ``directive``, ``choose_dealer``, ``cut``; origin ``player``, or
  ``deadline`` (a seat's default action when its time ran out).
* ``truc_games_created_total``, ``truc_games_finished_total``: games created,
  and games whose match ended (or whose fixed deals ran out).
* ``truc_games_active`` (gauge): games in progress in the whole store (a seat
  to act), refreshed every 5 s.
* ``truc_cas_conflicts_total{origin}``: COMMITs refused because another action
  moved the game's version first (origin ``session``: the replica's copy of the
  game was behind; the action is retried once after a reload).
* ``truc_sessions`` (gauge): Play sessions open on this replica.
* ``truc_session_messages_total{kind}``: messages sent on sessions: ``version``
  (one version), ``coalesced`` (several versions of a session that fell
  behind, in one message), ``refused``, ``repeated``.
"""

from __future__ import annotations

from typing import Final

from prometheus_client import Counter, Gauge

from truc_rules.actions import (
    Action,
    ChooseDealer,
    CutDeck,
    MakeCall,
    PlayCard,
    SendDirective,
    SendSignal,
)

__all__ = [
    "ACTIONS",
    "CAS_CONFLICTS",
    "GAMES_ACTIVE",
    "GAMES_CREATED",
    "GAMES_FINISHED",
    "SESSIONS",
    "SESSION_MESSAGES",
    "action_kind",
    "count_action",
]

ACTIONS = Counter(
    "truc_actions",
    "Actions applied, by kind and origin (player, or deadline: a default action).",
    ["kind", "origin"],
)
GAMES_CREATED = Counter("truc_games_created", "Games created.")
GAMES_FINISHED = Counter("truc_games_finished", "Games whose match ended.")
GAMES_ACTIVE = Gauge(
    "truc_games_active",
    "Games in progress in the whole store (the same on every replica: use max()).",
)
CAS_CONFLICTS = Counter(
    "truc_cas_conflicts",
    "Commits refused because the game's version had moved on, by origin.",
    ["origin"],
)
SESSIONS = Gauge("truc_sessions", "Play sessions open on this replica.")
SESSION_MESSAGES = Counter(
    "truc_session_messages",
    "Messages sent on Play sessions, by kind (version, coalesced, refused, repeated).",
    ["kind"],
)

_KINDS: Final[dict[type, str]] = {
    PlayCard: "play",
    MakeCall: "call",
    SendSignal: "signal",
    SendDirective: "directive",
    ChooseDealer: "choose_dealer",
    CutDeck: "cut",
}
_COUNTERS: Final = {
    (kind, origin): ACTIONS.labels(kind, origin)
    for kind in _KINDS.values()
    for origin in ("player", "session", "deadline")
}


def action_kind(action: Action) -> str:
    """The action's kind, what logs and metrics say instead of the action (never a card)."""
    return _KINDS[type(action)]


def count_action(kind: str, origin: str) -> None:
    _COUNTERS[kind, origin].inc()
