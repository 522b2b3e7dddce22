"""Spreading calls over the replicas of a service.

A gRPC channel keeps one long-lived HTTP/2 connection; with the default
``pick_first`` policy every call of a client goes to one replica, whatever the
number of replicas behind its target. Two options fix that together:

* clients use :data:`ROUND_ROBIN`: a channel connects to every address its
  target resolves to (``dns:///truc-game-pods:50051``: a Kubernetes headless
  Service lists each ready pod; ``ipv4:10.0.0.1:50051,10.0.0.2:50051``) and
  takes them in turn. With a single address it behaves as before;
* servers use :func:`connection_age`: after that long a connection is closed
  gracefully (GOAWAY: calls in flight, watch streams included, finish; new
  calls open a new connection), so clients resolve again and reach replicas
  added since, e.g. by an autoscaler.
"""

from __future__ import annotations

import json
from typing import Final

__all__ = ["ROUND_ROBIN", "connection_age"]

ROUND_ROBIN: Final = (
    ("grpc.service_config", json.dumps({"loadBalancingConfig": [{"round_robin": {}}]})),
)
"""Channel options: round robin over every resolved address."""


def connection_age(seconds: int) -> tuple[tuple[str, int], ...]:
    """Server options closing each connection gracefully after ``seconds`` (0: never).

    Calls in flight on a closed connection (long watch streams too) are let
    finish: no grace limit is set.
    """
    if seconds <= 0:
        return ()
    return (("grpc.max_connection_age_ms", seconds * 1000),)
