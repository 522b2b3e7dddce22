"""The Redis client the game service and the lobby share (they never import
each other): :mod:`truc_redis.connection`."""
