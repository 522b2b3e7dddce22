"""truc-game: the game service of the Truc family (Truc y Flou and the variants.md rule sets).

``truc_rules`` is the pure rules engine (no I/O, no clock, no global
randomness). The gRPC service built on it lives beside it.
"""
