"""truc-game: the Truc y Flou game service.

``truc_rules`` is the pure rules engine (no I/O, no clock, no global
randomness). The gRPC service built on it lives beside it.
"""
