"""Adapters of the game service's ports (:mod:`truc_game.ports`).

* :mod:`.redis_store` and :mod:`.redis_keys`: the game store on Redis (keys, Lua
  compare-and-set, event log, deadlines);
* :mod:`.redis_feed`: the version feed on Redis pub/sub (one connection per replica);
* :mod:`.memory`: both ports in memory, for fast use-case tests (one process only).
"""
