"""truc-dev-chaos: the chaos suite, development only (``make chaos``, ``make soak``).

Real processes (:mod:`.processes`: Valkey behind the suite's TCP proxies
(:mod:`.proxy`), two game replicas, two lobbies, the gateway), scripted players over
gRPC and REST (:mod:`.players`, :mod:`.grpc_players`, :mod:`.rest_players`) writing
a journal (:mod:`.records`; each view seen as a digest: :mod:`.views`), faults on a
schedule (:mod:`.faults`; machine crashes cut the AOF: :mod:`.aof`), then the
invariant checks (:mod:`.checks`) on Redis read directly (:mod:`.store_state`) and
the public API, and the figures (:mod:`.report`).
One run per ``appendfsync`` mode: :mod:`.run`; the soak: :mod:`.soak`. No service or
library imports this package.
"""
