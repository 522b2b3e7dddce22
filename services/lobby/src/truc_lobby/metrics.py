"""The lobby's Prometheus series (the RPC and store series are
:mod:`truc_telemetry.metrics`'). Counters and the wait histogram are per
replica (only the replica that runs a matching round observes it): sum them
across replicas. ``truc_lobby_queued_tickets`` is read from Redis, so every
replica reports the same count: take ``max()``.

* ``truc_lobby_queued_tickets`` (gauge): tickets in the queue, refreshed every second.
* ``truc_lobby_ticket_wait_seconds`` (histogram): from entering the queue to
  being seated at a table, per ticket of players (bots do not wait).
* ``truc_lobby_tables_seated_total``: tables seated (games created).
* ``truc_lobby_tickets_expired_total``: queued tickets nobody watched, and
  party tickets never confirmed, expired by a matching round.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

__all__ = ["QUEUED_TICKETS", "TABLES_SEATED", "TICKETS_EXPIRED", "TICKET_WAIT"]

QUEUED_TICKETS = Gauge(
    "truc_lobby_queued_tickets",
    "Tickets in the queue now (the whole lobby: the same on every replica, use max()).",
)
TICKET_WAIT = Histogram(
    "truc_lobby_ticket_wait_seconds",
    "From entering the queue to being seated at a table, per ticket.",
    buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600),
)
TABLES_SEATED = Counter("truc_lobby_tables_seated", "Tables seated (games created).")
TICKETS_EXPIRED = Counter("truc_lobby_tickets_expired", "Tickets expired by a matching round.")
